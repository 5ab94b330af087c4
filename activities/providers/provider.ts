import type Docker from 'dockerode';

import type { Provider } from '@shared/deployments/types';
import type { InstanceFilter, InstanceState } from '@shared/engine/instances';
import type { DeploymentHealth, InstanceMetrics, LogQuery, ProviderLogLine } from '@shared/engine/observe';

// The read side (instances, health, metrics, logs) is shared with the api, which serves it without activities.
export type { InstanceFilter, InstanceState } from '@shared/engine/instances';
export type {
  DeploymentHealth,
  InstanceHealth,
  InstanceMetrics,
  LogQuery,
  OverallHealth,
  ProviderLogLine,
} from '@shared/engine/observe';
export type { HttpProbe } from '@shared/engine/probe';

/**
 * The deployment provider interface (docs/architecture.md, "Providers and the engine"): what the deployment workflow
 * may ask of a platform, through activities. engine_local (engine-local.ts) implements all of it; a cloud adapter
 * implements the same.
 *
 * The issue's verbs map onto it as follows:
 * - deploy   = prepareImage, then startInstance for replicas 0..N-1, then waitInstanceReady on each;
 * - stop     = stopInstances;         start = startInstances, then waitInstanceReady on each returned instance;
 * - scale    = startInstance for the new replica indexes (+ waitInstanceReady), removeInstances({replicasFrom: N});
 * - redeploy / rollback = startInstance with the next revision beside the old one, waitInstanceReady, switch the
 * edge route to the new upstreams, then removeInstances({exceptRevision: new}); pruneImages with the last N releases'
 * imageIds;
 * - destroy  = destroy;  logs, health, metrics as named.
 *
 * An instance is one container of one release, identified by (deploymentId, revision, replica). Every call is safe to
 * retry (Temporal retries activities): the ones marked "Idempotent" end in the same state when run twice, or after a
 * half-finished attempt. Everything returned is plain JSON (it goes into workflow history) and carries no env values
 * and no engine text.
 *
 * Failures are thrown as Temporal ApplicationFailure. The non-retryable ones the caller should show have a `type` from
 * PROVIDER_FAILURES and, as `details[0]`, a FailureDetails (read it with `failureDetails(err.cause)` in the workflow).
 * Any other failure is internal (engine down, …): log it, tell the user something generic.
 */

export interface ResourceLimits {
  memoryMb: number;
  cpus: number;
  pids: number;
}

export interface InstanceSpec {
  deploymentId: string;
  orgId: string;
  /** The release this instance runs. */
  revision: number;
  /** 0-based replica index within the release. */
  replica: number;
  /** The image reference as deployed (tag or digest); checked again for the org at this moment. */
  image: string;
  /**
   * The image ID a release recorded (`sha256:<64 hex>`, Instance.imageId of an earlier start). Given, the instance
   * runs exactly that image even if the tag moved or the registry is gone: rollback needs no pull and no rebuild.
   * Only ever from the workflow's own release records, never from a request: the provider checks that the image
   * exists and is not another organisation's, but an ID names no repository the org was checked against.
   */
  imageId?: string;
  /** The port the app listens on inside the container. */
  port: number;
  /** Values in the clear: opened by the activity from the sealed record, never passed through workflow history. */
  env: Record<string, string>;
  /**
   * The release's volumes, as the engine mounts them (engine-volumes.ts `mountSpec`, storage ensured first): set by
   * the activity from the release record, never from a request or workflow history.
   */
  mounts?: Docker.MountSettings[];
  limits: ResourceLimits;
}

/** Which instance it is and what it runs, started or listed. */
export interface InstanceIdentity {
  /** The engine's container ID. */
  id: string;
  /** Deterministic from (deploymentId, revision, replica), unique on the engine. */
  name: string;
  deploymentId: string;
  revision: number;
  replica: number;
  /** What the container runs (`sha256:…`): record it in the release, pass it back as InstanceSpec.imageId. */
  imageId: string;
}

/** A started instance. */
export interface Instance extends InstanceIdentity {
  /**
   * `host:port` the edge router on this host dials (the host-published port on loopback or the bind address).
   * It can change when a stopped instance starts again: publish what startInstances returns.
   */
  upstream: string;
  /** The direct container address (`http://<PUBLIC_HOST>:<hostPort>`), shown as `instances[].url`. */
  url: string;
  hostPort: number;
}

export interface InstanceStatus extends InstanceIdentity {
  state: InstanceState;
  /** The engine's restart count (restarts by the restart policy since the container was last started by us). */
  restarts: number;
  /** ISO time; absent when never started. */
  startedAt?: string;
  /** ISO time of the last exit; absent when it never exited. */
  finishedAt?: string;
  /** Set once the container has exited at least once. */
  exitCode?: number;
  oomKilled: boolean;
  /** Null while the container is not running (no published port). */
  upstream: string | null;
  url: string | null;
  hostPort: number | null;
}

/** Why an instance failed, for `lastFailure {phase, exitCode, lastLines, hint}`. */
export interface Diagnosis {
  name: string;
  state: InstanceState;
  exitCode?: number;
  oomKilled: boolean;
  restarts: number;
  /** The last log lines (stdout and stderr merged), at most 20. */
  lastLines: string[];
  /** What the user should do next, in our words. */
  hint: string;
}

export const PROVIDER_FAILURES = {
  /** The container exited (or crash-loops) before it answered. details: FailureDetails with exitCode. */
  containerExited: 'ContainerExited',
  /** Nothing ever accepted a connection on the port within the timeout (the app listens elsewhere, or is slow). */
  portNeverOpened: 'PortNeverOpened',
  /** The port accepted connections but no HTTP answer came within the timeout. */
  appNotAnswering: 'AppNotAnswering',
  /** The image is absent, unpullable, or another organisation's (indistinguishable on purpose). */
  imageNotFound: 'ImageNotFound',
  invalidImageReference: 'InvalidImageReference',
  imageRegistryRefused: 'ImageRegistryRefused',
  /** The image is not on the engine and no registry answered the pull (name, connection or timeout). */
  imageRegistryUnreachable: 'ImageRegistryUnreachable',
  engineRequestRefused: 'EngineRequestRefused',
} as const;
export type ProviderFailureType = (typeof PROVIDER_FAILURES)[keyof typeof PROVIDER_FAILURES];

/** `details[0]` of a provider's non-retryable readiness failure. */
export interface FailureDetails {
  instance: string;
  exitCode?: number;
  oomKilled?: boolean;
  restarts?: number;
  lastLines: string[];
  hint: string;
}

/** FailureDetails of a failure thrown by a provider call (pass `ActivityFailure.cause`), or undefined. */
export function failureDetails(cause: unknown): FailureDetails | undefined {
  const details = (cause as { details?: unknown[] } | undefined)?.details?.[0] as Partial<FailureDetails> | undefined;
  return details && typeof details.instance === 'string' && Array.isArray(details.lastLines)
    ? (details as FailureDetails)
    : undefined;
}

export interface DeploymentProvider {
  readonly provider: Provider;

  /**
   * Makes the image available (pulled only when absent) after checking the org may use it. Idempotent.
   * Returns the image ID to record in the release.
   */
  prepareImage(image: string, orgId: string): Promise<{ pulled: boolean; imageId: string }>;

  /**
   * Creates and starts one instance. Idempotent by name: a retried activity finds the container it already made
   * and starts it if it is not running. Throws ContainerExited when it dies at once, ImageNotFound (and the other
   * image types) when the org may not run the image. Does not wait for the port. On engine_local, replica 0 has
   * the name single containers had before replicas (`slipway-<id>-r<revision>`), so deployments started on older
   * code are seen as replica 0 of their revision.
   */
  startInstance(spec: InstanceSpec): Promise<Instance>;

  /**
   * Ready when the port accepts a connection and (unless `http: false`) the app answers an HTTP request with
   * anything. Throws (non-retryable) ContainerExited, PortNeverOpened or AppNotAnswering with FailureDetails.
   * Read-only, so safe to retry; heartbeats while it waits (give it a heartbeat timeout).
   */
  waitInstanceReady(
    instance: Pick<Instance, 'id' | 'name'>,
    opts: { port: number; timeoutS: number; http?: boolean },
  ): Promise<void>;

  /** Every instance of the deployment (filtered), ordered by revision then replica. Read-only. */
  listInstances(deploymentId: string, filter?: InstanceFilter): Promise<InstanceStatus[]>;

  /**
   * Stops the selected instances and keeps them (and their logs); the restart policy is switched off first so
   * neither a crash nor an engine restart brings them back. Idempotent. Returns how many instances it selected.
   */
  stopInstances(deploymentId: string, filter?: InstanceFilter): Promise<number>;

  /**
   * Starts the selected stopped instances again, same containers and names, restart policy back on; running ones
   * are left as they are. Idempotent. Returns every selected instance with its current upstream: the engine
   * publishes a restarted container on a NEW host port, so publish these (after waitInstanceReady), never the
   * upstreams from before the stop. Throws ContainerExited when one dies at once.
   */
  startInstances(deploymentId: string, filter?: InstanceFilter): Promise<Instance[]>;

  /** Removes the selected instances (with their logs). Idempotent. Returns how many it removed. */
  removeInstances(deploymentId: string, filter: InstanceFilter): Promise<number>;

  /**
   * Removes everything the deployment holds: instances, its built images, the org network once unused.
   * Idempotent. Returns the number of instances removed.
   */
  destroy(deploymentId: string): Promise<number>;

  /** State, restarts and a live HTTP probe per instance, and the overall verdict. Read-only. */
  health(deploymentId: string, opts: { port: number; revision?: number }): Promise<DeploymentHealth>;

  /** Current resource use per running instance (one engine stats read each, about 1-2 s). Read-only. */
  metrics(deploymentId: string, filter?: InstanceFilter): Promise<InstanceMetrics[]>;

  /** The instances' own output (stdout/stderr), merged by time. Read-only. */
  logs(deploymentId: string, query: LogQuery): Promise<ProviderLogLine[]>;

  /**
   * Removes the deployment's own images (built here, labelled with it) that are not in `keep` and not used by any
   * container. Images it did not build (public images deployed by reference) are never removed. Idempotent.
   * Pass the imageIds of the last N releases as `keep`.
   */
  pruneImages(deploymentId: string, keep: string[]): Promise<{ removed: string[] }>;

  /**
   * Why an instance is not serving: exit code (also of a crash-looping container caught between restarts), OOM
   * kill, restarts, last lines and a hint. Read-only. Like waitInstanceReady, takes an instance this provider
   * returned (startInstance, startInstances, listInstances), never an ID from a request.
   */
  diagnose(instance: Pick<Instance, 'id' | 'name'>): Promise<Diagnosis>;
}
