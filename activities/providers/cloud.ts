import { ApplicationFailure } from '@temporalio/common';

import type { CloudCredentialsOf, CloudProvider } from '@shared/cloud/credentials';
import type { CloudFailureDetails } from '@shared/cloud/failures';
import type { LogQuery, ProviderLogLine } from '@shared/engine/observe';

/**
 * The cloud provider interface (docs/architecture.md, "Cloud providers"): what the cloud deployment workflow may ask
 * of a cloud's container service, through activities. Each adapter (cloud-run.ts, cloud-container-apps.ts,
 * cloud-ecs.ts) implements it on the platform's official SDK.
 *
 * Unlike engine_local, a cloud runs the replicas, keeps the revisions and serves the URL itself: a deployment is one
 * cloud service (Cloud Run service, container app, ECS service), a release one of its revisions (Cloud Run revision,
 * Container Apps revision, ECS task definition revision), replicas its instance count. So the verbs are:
 * - deploy / redeploy = deployRevision (a new revision taking all traffic), then waitServing;
 * - rollback          = serveRevision of a kept revision, then waitServing;
 * - stop / start / scale = setReplicas (0 stops; the service, its URL and revisions stay);
 * - destroy           = destroy (everything it created, whatever state it is in);
 * - logs, status      = as named; listManaged feeds the reconciler.
 *
 * Every call takes the organisation's opened credentials (never from workflow history: the activity opens them from
 * the vault) and is safe to retry: the ones marked Idempotent end in the same state when run twice or after a
 * half-finished attempt. Everything returned is plain JSON with no env values and no SDK text beyond `message`s
 * written in our words.
 *
 * Failures are thrown as CloudFailure (non-retryable, with one of CLOUD_FAILURES, a message for the user and a hint)
 * when retrying cannot help; anything else (throttling, 5xx, a network error) is thrown as is and retried by Temporal
 * with the activity's policy, after the SDK's own retries (each adapter sets them to the API's documented ones).
 */

/** Every resource an adapter creates carries these labels or tags, so the reconciler can find what leaked. */
export const CLOUD_LABELS = {
  managed: 'slipway-managed',
  deployment: 'slipway-deployment',
  org: 'slipway-org',
} as const;

export interface CloudReleaseSpec {
  deploymentId: string;
  orgId: string;
  /** The release's revision number; the adapter derives its revision's name from it (deterministic: a retry finds it). */
  revision: number;
  /** A reference the cloud can pull (a public image, or one pushed to the org's registry by a source deploy). */
  image: string;
  port: number;
  /** Values in the clear, opened by the activity from the sealed record. Set as the cloud's env (never logged). */
  env: Record<string, string>;
  replicas: number;
  /** The plan's per-instance limits, rounded up by the adapter to the nearest size the platform sells. */
  limits: { memoryMb: number; cpus: number };
  /** One of the credentials' regions. */
  region: string;
}

export interface CloudRevision {
  revision: number;
  /** The cloud's name for it: Cloud Run revision name, Container Apps revision name, ECS task definition ARN. */
  name: string;
}

export type CloudPhase = 'deploying' | 'serving' | 'failed' | 'stopped' | 'absent';

export interface CloudServiceStatus {
  phase: CloudPhase;
  /** The revision taking the traffic (null before any does). */
  serving: CloudRevision | null;
  desiredReplicas: number;
  runningReplicas: number;
  /** The public URL, once the cloud assigned one. */
  url: string | null;
  /** Why it failed or is not serving, in our words with the cloud's reason quoted. */
  message?: string;
  /** ISO time the cloud reported this at. */
  at: string;
}

/** One resource carrying our labels, for the reconciler. */
export interface ManagedResource {
  deploymentId: string;
  orgId: string;
  /** The cloud's identifier (resource name, ID or ARN). */
  id: string;
  kind: string;
  region: string;
}

export const CLOUD_FAILURES = {
  /** The credentials were refused (sign-in failed, or they lack a permission the call needs). */
  credentialsRefused: 'CloudCredentialsRefused',
  /** The request was refused for what it asked (bad image, size, region, quota): retrying will not help. */
  requestRefused: 'CloudRequestRefused',
  /** The revision never became ready (it crashed, failed its health check or the image did not pull). */
  revisionFailed: 'CloudRevisionFailed',
} as const;
export type CloudFailureType = (typeof CLOUD_FAILURES)[keyof typeof CLOUD_FAILURES];

export { type CloudFailureDetails, cloudFailureDetails } from '@shared/cloud/failures';

export interface CloudAdapter<P extends CloudProvider = CloudProvider> {
  readonly provider: P;

  /**
   * A read-only call with the credentials (list services in each region, or the equivalent), so credentials that
   * cannot work are refused before they are saved. Throws CloudFailure credentialsRefused or requestRefused (a region
   * the account cannot use) naming what was wrong.
   */
  verify(credentials: CloudCredentialsOf[P]): Promise<void>;

  /**
   * Creates the service with this revision, or a new revision of it, taking all traffic with `replicas` instances.
   * Idempotent by (deploymentId, revision). Does not wait for it to serve.
   */
  deployRevision(credentials: CloudCredentialsOf[P], spec: CloudReleaseSpec): Promise<CloudRevision>;

  /** Sends all traffic to a kept revision (a rollback). Idempotent. */
  serveRevision(
    credentials: CloudCredentialsOf[P],
    target: { deploymentId: string; region: string; revision: CloudRevision; replicas: number },
  ): Promise<void>;

  /** The instance count: 0 stops (the service, URL and revisions stay), more starts or scales. Idempotent. */
  setReplicas(
    credentials: CloudCredentialsOf[P],
    target: { deploymentId: string; region: string; replicas: number },
  ): Promise<void>;

  /** The service as the cloud reports it; `absent` when there is none. Read-only. */
  status(
    credentials: CloudCredentialsOf[P],
    target: { deploymentId: string; region: string },
  ): Promise<CloudServiceStatus>;

  /** The app's output, newest `tail` lines at or after `since`, oldest first. Read-only. */
  logs(
    credentials: CloudCredentialsOf[P],
    target: { deploymentId: string; region: string },
    query: LogQuery,
  ): Promise<ProviderLogLine[]>;

  /**
   * Removes everything it created for the deployment (service, revisions or task definitions, routing rules, target
   * groups, log groups), in whatever state it is. Idempotent: what is already gone is skipped. Returns what it removed.
   */
  destroy(credentials: CloudCredentialsOf[P], target: { deploymentId: string; region: string }): Promise<string[]>;

  /**
   * How to sign in to the credentials' registry when it names no username: the cloud's own registry sign-in
   * (Artifact Registry: `oauth2accesstoken` and an access token of the service account; ACR: the client ID and
   * secret; ECR: GetAuthorizationToken). Read-only.
   */
  registryAuth(credentials: CloudCredentialsOf[P]): Promise<{ username: string; password: string }>;

  /** Every resource in the credentials' regions carrying CLOUD_LABELS.managed. Read-only. */
  listManaged(credentials: CloudCredentialsOf[P]): Promise<ManagedResource[]>;
}

/**
 * The cloud's name of a deployment's service: lower-case letters and digits after a letter, at most `max` characters,
 * stable for the deployment (Container Apps allows 32, Cloud Run 49, ECS 255). The deployment's ID is a UUID: 31 of
 * its hex digits still leave collisions at 2^-62 among a billion deployments of one account.
 */
export const cloudServiceName = (deploymentId: string, max = 32) =>
  `s${deploymentId.replace(/[^a-z0-9]/gi, '').toLowerCase()}`.slice(0, max);

/** A non-retryable failure the workflow shows the user (CloudFailureDetails as `details[0]`). */
export function cloudFailure(type: CloudFailureType, details: CloudFailureDetails): ApplicationFailure {
  return ApplicationFailure.create({ message: details.message, type, nonRetryable: true, details: [details] });
}
