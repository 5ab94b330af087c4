/**
 * What the api needs to start and command a deployment's workflow, and nothing else: the api imports this file,
 * never the workflow code (docs/architecture.md, "Layers and where code goes").
 */
import { ApplicationFailure, defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

import type { DeploymentSource, DeploymentStatus } from '../../shared/deployments/types';
import type { EntityState } from './state';

export type { EntityState, ReleaseRef } from './state';

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
 * progress can only be destroyed; a failed one can be fixed by a redeploy (new env) or a rollback to a release that was
 * healthy; `scale` to 0 is a stop.
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

export interface CommandRefusal {
  command: CommandName;
  /** The status the command would have met, after the commands accepted before it. */
  status: DeploymentStatus;
  allowed: CommandName[];
}

/** Refuses `command` in `status` (or for `reason`), in words a caller can act on. */
export function refuse(command: CommandName, status: DeploymentStatus, reason?: string): ApplicationFailure {
  const allowed = [...ALLOWED_COMMANDS[status]];
  const message =
    reason ??
    `The deployment is ${status}, so it cannot ${command}; a ${status} deployment accepts ${allowed.join(', ')}.`;
  return ApplicationFailure.create({
    type: COMMAND_REFUSED,
    nonRetryable: true,
    message,
    details: [{ command, status, allowed } satisfies CommandRefusal],
  });
}

export interface RedeployArgs {
  /** Names of the new environment (they replace the old ones). */
  envNames: string[];
  /** The sealed values, stored by the api beforehand (releases-store env sets): values never enter history. */
  envRef: string;
}
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
