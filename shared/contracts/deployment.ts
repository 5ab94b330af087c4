/**
 * The deployment workflow's contract: what the api, the reconciler and the worker need to start and command a
 * deployment's workflow, and nothing else (docs/architecture.md, "Layers and where code goes"). Types and plain
 * definitions only, so the workflow bundle imports it as readily as the api does.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

import type { DeploymentSource, DeploymentStatus, LastFailure, Provider } from '../deployments/types';

/** The workflow's type name: the exported function's name in workflows/deployment/workflow.ts. */
export const DEPLOYMENT_WORKFLOW = 'deploymentWorkflow';

/** One entity workflow per deployment, named by its record's ID: a retried create finds the same workflow. */
export const deploymentWorkflowId = (deploymentId: string) => `deployment/${deploymentId}`;

/** A release as the workflow remembers it: enough to roll back to it without reading the database. */
export interface ReleaseRef {
  revision: number;
  /** The reference as deployed (shown in events) and the image ID that runs. */
  image: string;
  imageId: string;
  /** It became ready once: "rollback to the last healthy release" picks among these. */
  healthy: boolean;
  /** How many volumes its instances mount (absent: none); a volume takes one writer, so such a release runs one. */
  volumes?: number;
  /** On a cloud provider: the cloud's name of the revision that runs it (a rollback sends traffic back to it). */
  cloudRevision?: string;
}

/**
 * What a deployment's workflow knows between commands, carried across continue-as-new. Plain JSON: it is the new
 * run's input, so it is in history (no env value ever is).
 */
export interface EntityState {
  status: DeploymentStatus;
  /** The record's version the workflow last wrote. */
  version: number;
  /** The release that serves (running) or would serve once started (stopped); absent if none ever started. */
  current?: ReleaseRef;
  nextRevision: number;
  replicas: number;
  /** Newest first, at most `releasesKept`: their images are kept, so these are the rollback targets. */
  releases: ReleaseRef[];
  /**
   * The first deploy ran code from before releases existed: it has no release record and no edge route, and its
   * image ID is looked up when a command first needs it.
   */
  legacy?: boolean;
  /** The edge route exists (a stable URL); routes are published by code from after the edge router came. */
  routed?: boolean;
  /** The last failure the record still shows (lastFailure or error), in the words the Temporal UI shows it. */
  failure?: string;
  /** The Temporal UI's current details of this deployment, set again by the run that resumes it. */
  details?: string;
}

export interface DeploymentWorkflowInput {
  deploymentId: string;
  orgId: string;
  source: DeploymentSource;
  port: number;
  /**
   * Names only: values are secrets, kept out of history (Temporal's store, its UI) and read from the sealed
   * record by the activity that starts the container.
   */
  envNames?: string[];
  /** Inputs of workflows started before values were passed by reference carry them here; they still deploy. */
  envVars?: Record<string, string>;
  revision: number;
  /**
   * Where it runs: a cloud provider's deployments take workflows/deployment/cloud.ts's path through the same
   * commands; absent (every workflow started before cloud providers) is engine_local.
   */
  provider?: Provider;
  /** The region of a cloud provider's deployment (one of its credentials' regions). */
  region?: string;
  limits: { memoryMb: number; cpus: number; pids: number };
  readyTimeoutS: number;
  /** Fetch, extract and build together may take this long (source deployments). */
  buildTimeoutS?: number;
  /** Version of the record the api wrote (the `queued` one); every later write counts up from here. */
  version: number;
  /** Replicas of the first release (1 when absent). */
  replicas?: number;
  /** Releases whose images are kept from pruning, so they can be rolled back to (RELEASES_KEPT; 10 when absent). */
  releasesKept?: number;
  /** Commands one run executes before it continues as new (a fresh history); the server may suggest it sooner. */
  commandsPerRun?: number;
  /**
   * The app and its org, as the Temporal UI's summary of the first run says them: later runs (continue-as-new)
   * have no summary of their own, so their current details carry it.
   */
  summary?: string;
  /** Set by continue-as-new: the deployment is past its first deploy and resumes waiting for commands. */
  resume?: EntityState;
}

/**
 * Sent by the api (with signalWithStart, so a workflow not yet started starts straight into its destroy) after it
 * has written the destroy intent and hidden the record; and by the reconciler for a destroy the api left half done.
 */
export const destroySignal = defineSignal('destroy');

export const COMMANDS = ['stop', 'start', 'redeploy', 'scale', 'rollback', 'destroy'] as const;
export type CommandName = (typeof COMMANDS)[number];

/**
 * The commands each status accepts (docs/architecture.md, "A deployment's lifecycle, as workflows"). A deploy in
 * progress can only be destroyed; a failed one can be fixed by a redeploy (new env or new code) or a rollback to a
 * release that was healthy; `scale` to 0 is a stop.
 */
export const ALLOWED_COMMANDS: Record<DeploymentStatus, readonly CommandName[]> = {
  queued: ['destroy'],
  building: ['destroy'],
  deploying: ['destroy'],
  running: ['stop', 'redeploy', 'scale', 'rollback', 'destroy'],
  stopping: ['destroy'],
  stopped: ['start', 'redeploy', 'scale', 'rollback', 'destroy'],
  failed: ['redeploy', 'rollback', 'destroy'],
};

/** The `type` of the ApplicationFailure a validator refuses a command with; details[0] is a CommandRefusal. */
export const COMMAND_REFUSED = 'CommandRefused';
/** The `type` of the failure of an accepted command that could not be carried out (details[0]: CommandFailure). */
export const COMMAND_FAILED = 'CommandFailed';

/** Why an accepted command's release did not get to serve: lastFailure as the workflow sends it (no time yet). */
export type CommandFailure = Omit<LastFailure, 'at'>;

export interface CommandRefusal {
  command: CommandName;
  /** The status the command would have met, after the commands accepted before it. */
  status: DeploymentStatus;
  allowed: CommandName[];
}

/**
 * A redeploy brings a new environment, new code, or both. Histories from before new code could be shipped carry the
 * environment alone, and such a redeploy runs exactly as it always did (the serving image, the new env).
 */
export interface RedeployArgs {
  /** Names of the new environment (they replace the old ones); absent with envRef: the serving env is kept. */
  envNames?: string[];
  /** The sealed values, stored by the api beforehand (releases-store env sets): values never enter history. */
  envRef?: string;
  /**
   * New code, checked by the api as a first deploy's source is: built (upload, Git) or pulled (image) as the next
   * release, which then starts beside the serving one.
   */
  source?: DeploymentSource;
  /**
   * The deployment's attachments changed (a volume attached or detached, a reference linked): the serving image and
   * env ship again as a new release, which copies the attachments as they are then. `volumes` is how many volumes the
   * api saw after the change, so the workflow can refuse more than one instance mounting them.
   */
  remount?: { volumes: number };
}
/** What a volume allows: one writer, so one instance of a deployment that mounts any (the api says it too). */
export const ONE_WRITER =
  'A volume can be mounted by one instance only (one writer): scale the deployment to 1 first, or detach its volumes.';

export interface ScaleArgs {
  replicas: number;
  /** The organisation's plan maximum at the time of the request. */
  maxReplicas: number;
}
export interface RollbackArgs {
  /** Absent: the last release that was healthy before the current one. */
  revision?: number;
}

/** What a finished command left: the deployment's status and the release that serves. */
export interface CommandOutcome {
  command: CommandName;
  status: DeploymentStatus;
  revision: number;
  replicas: number;
}

export const stopCommand = defineUpdate<CommandOutcome, []>('stop');
export const startCommand = defineUpdate<CommandOutcome, []>('start');
export const redeployCommand = defineUpdate<CommandOutcome, [RedeployArgs]>('redeploy');
export const scaleCommand = defineUpdate<CommandOutcome, [ScaleArgs]>('scale');
export const rollbackCommand = defineUpdate<CommandOutcome, [RollbackArgs]>('rollback');
export const destroyCommand = defineUpdate<CommandOutcome, []>('destroy');

export interface CommandsView {
  status: DeploymentStatus;
  revision: number;
  replicas: number;
  /** The command being carried out, then those waiting, each with the update ID it was accepted under. */
  running?: { command: CommandName; updateId: string };
  queued: { command: CommandName; updateId: string }[];
}

/** What the workflow is doing now: a command's progress between its 202 and its end. */
export const commandsQuery = defineQuery<CommandsView>('commands');
