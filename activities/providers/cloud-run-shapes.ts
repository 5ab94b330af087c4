import type { protos } from '@google-cloud/run';

import {
  CLOUD_FAILURES,
  CLOUD_LABELS,
  cloudFailure,
  type CloudPhase,
  type CloudReleaseSpec,
  type CloudRevision,
  cloudServiceName,
} from './cloud';

/**
 * The pure half of cloud_a_run (cloud-run.ts): names, the service's shape as Cloud Run Admin API v2 takes it
 * (google/cloud/run/v2/service.proto), the phase read from what it reports, and Google's error codes in our words.
 */

type Service = protos.google.cloud.run.v2.IService;
type Condition = protos.google.cloud.run.v2.ICondition;

/** Cloud Run service IDs: at most 49 characters (63 minus the revision suffix Cloud Run may add). */
export const SERVICE_NAME_MAX = 49;
export const serviceId = (deploymentId: string) => cloudServiceName(deploymentId, SERVICE_NAME_MAX);
/** `<service>-r<revision>`: a retry of the same release names the same revision, so it finds it. */
export const revisionId = (deploymentId: string, revision: number) => `${serviceId(deploymentId)}-r${revision}`;
export const serviceName = (project: string, region: string, deploymentId: string) =>
  `projects/${project}/locations/${region}/services/${serviceId(deploymentId)}`;

/** The release number of one of our revision names (a short one or a full resource name), or null. */
export function revisionNumber(name: string): number | null {
  const m = /-r(\d+)$/.exec(name.split('/').pop() ?? '');
  return m ? Number(m[1]) : null;
}

export function cloudRevision(name: string): CloudRevision {
  const short = name.split('/').pop() ?? name;
  // A revision not named by us (made in the console) has no release number: 0 says so.
  return { revision: revisionNumber(short) ?? 0, name: short };
}

/**
 * Label values (https://cloud.google.com/run/docs/configuring/labels): lower-case letters, digits, `_` and `-`, at most
 * 63. Our IDs are UUIDs, which fit as they are; anything else is lower-cased and trimmed rather than refused.
 */
const labelValue = (v: string) =>
  v
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '_')
    .slice(0, 63);
export const serviceLabels = (deploymentId: string, orgId: string) => ({
  [CLOUD_LABELS.managed]: 'true',
  [CLOUD_LABELS.deployment]: labelValue(deploymentId),
  [CLOUD_LABELS.org]: labelValue(orgId),
});

/**
 * The smallest Cloud Run size at or above the plan's limits (https://cloud.google.com/run/docs/configuring/services/cpu,
 * …/memory-limits): cpu 1, 2, 4, 6 or 8 (fractions below 1 need concurrency 1, which we do not set); memory in MiB, at
 * least 512 (the least with cpu 1), at most 32 GiB, and at least the cpu's floor (4 cpu: 2 GiB, 6: 4 GiB, 8: 4 GiB).
 */
const CPU_SIZES = [1, 2, 4, 6, 8];
const MEMORY_FLOOR_MIB: Record<number, number> = { 1: 512, 2: 512, 4: 2048, 6: 4096, 8: 4096 };
const MEMORY_MAX_MIB = 32 * 1024;
export function runLimits(limits: CloudReleaseSpec['limits']): { cpu: string; memory: string } {
  const cpu = CPU_SIZES.find((c) => c >= limits.cpus);
  const memory = Math.max(Math.ceil(limits.memoryMb / 128) * 128, MEMORY_FLOOR_MIB[cpu ?? 8]!);
  if (cpu === undefined || memory > MEMORY_MAX_MIB)
    throw cloudFailure(CLOUD_FAILURES.requestRefused, {
      provider: 'cloud_a_run',
      message: `Cloud Run cannot run ${limits.cpus} cpu and ${limits.memoryMb} MB per instance (at most 8 cpu and 32 GiB).`,
      hint: 'Choose a smaller plan for this deployment.',
    });
  return { cpu: String(cpu), memory: `${memory}Mi` };
}

/** The revision template of a release: its name, labels, one container. */
export function releaseTemplate(spec: CloudReleaseSpec): Service['template'] {
  return {
    revision: revisionId(spec.deploymentId, spec.revision),
    labels: serviceLabels(spec.deploymentId, spec.orgId),
    containers: [
      {
        image: spec.image,
        ports: [{ containerPort: spec.port }],
        env: Object.entries(spec.env).map(([name, value]) => ({ name, value })),
        resources: { limits: runLimits(spec.limits) },
      },
    ],
  };
}

/**
 * Replicas as manual scaling (ServiceScaling.scalingMode MANUAL, https://cloud.google.com/run/docs/configuring/services/
 * manual-scaling): exactly `replicas` instances whatever the traffic, set on the service so changing it makes no new
 * revision. 0 is how a deployment stops: no instance runs, the URL, revisions and traffic split stay, and setting the
 * count back starts the same revision. Autoscaling's min/max cannot express "none even when a request comes".
 */
export const manualScaling = (replicas: number): Service['scaling'] => ({
  scalingMode: 'MANUAL',
  manualInstanceCount: replicas,
});

/**
 * What we send of a service on every write: Cloud Run's UpdateService replaces the service with the body, so a change
 * of traffic or scaling carries the template it keeps. Output-only fields are left out.
 */
export function serviceBody(current: Service, change: Partial<Service>): Service {
  return {
    name: current.name ?? null,
    labels: current.labels ?? {},
    ingress: current.ingress ?? 'INGRESS_TRAFFIC_ALL',
    invokerIamDisabled: current.invokerIamDisabled ?? true,
    template: current.template ?? null,
    traffic: current.traffic ?? [],
    scaling: current.scaling ?? null,
    ...change,
  };
}

export const ALL_TO_LATEST: Service['traffic'] = [{ type: 'TRAFFIC_TARGET_ALLOCATION_TYPE_LATEST', percent: 100 }];
export const allTo = (revision: string): Service['traffic'] => [
  { type: 'TRAFFIC_TARGET_ALLOCATION_TYPE_REVISION', revision, percent: 100 },
];

/** The revision taking the traffic: the largest share in trafficStatuses, LATEST resolved to the latest ready one. */
export function servingRevision(s: Service): CloudRevision | null {
  const top = [...(s.trafficStatuses ?? [])].sort((a, b) => (b.percent ?? 0) - (a.percent ?? 0))[0];
  if (!top || !top.percent) return null;
  const name = top.revision || (String(top.type).endsWith('LATEST') ? s.latestReadyRevision : '');
  return name ? cloudRevision(name) : null;
}

const stateOf = (c: Condition | null | undefined) => String(c?.state ?? '');

/**
 * The phase from what Cloud Run reports (https://cloud.google.com/run/docs/reference/rest/v2/Condition): `reconciling`
 * while a change rolls out, then the terminal condition (type Ready) says whether it succeeded; a manual count of 0
 * that succeeded is stopped.
 */
export function phaseOf(s: Service): { phase: CloudPhase; message?: string } {
  const terminal = s.terminalCondition;
  if (stateOf(terminal) === 'CONDITION_FAILED') {
    const failed = (s.conditions ?? []).find((c) => stateOf(c) === 'CONDITION_FAILED') ?? terminal;
    return {
      phase: 'failed',
      message: `Cloud Run reports the service not ready: "${failed?.message || terminal?.message || 'no reason given'}".`,
    };
  }
  if (s.reconciling || stateOf(terminal) !== 'CONDITION_SUCCEEDED') return { phase: 'deploying' };
  if (String(s.scaling?.scalingMode) === 'MANUAL' && !s.scaling?.manualInstanceCount) return { phase: 'stopped' };
  return { phase: 'serving' };
}

/** An RFC 3339 time of a protobuf Timestamp as the SDK decodes it, or undefined. */
export function isoTime(t: { seconds?: unknown; nanos?: unknown } | null | undefined): string | undefined {
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  const ms = Number(t.seconds) * 1000 + Math.floor(Number(t.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}

/** google.rpc.Code (https://cloud.google.com/apis/design/errors#handling_errors), as the SDK's errors carry it. */
export const CODE = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  OUT_OF_RANGE: 11,
  UNAUTHENTICATED: 16,
} as const;

interface GoogleErrorLike {
  code?: unknown;
  message?: unknown;
  reason?: unknown;
  details?: unknown;
}

/** google.rpc.Code by name, for the `status` of a REST error body. */
const CODE_NAMES: Record<string, number> = {
  CANCELLED: 1,
  UNKNOWN: 2,
  ...CODE,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
};
/** HTTP statuses as google.rpc.Code (https://cloud.google.com/apis/design/errors#handling_errors), for bodies without. */
const HTTP_CODES: Record<number, number> = {
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  409: 10,
  429: 8,
  499: 1,
  500: 13,
  501: 12,
  503: 14,
  504: 4,
};

/**
 * Google's REST error (`{"error": {code, message, status, details}}`) as the SDK's GoogleError carries it. In REST mode
 * the SDK's HTTP client (gaxios, through google-auth-library's fetch) throws an HTTP error before the SDK decodes the
 * body, so the status arrives as a GaxiosError with the body as its message; this reads both.
 */
export function googleError(err: unknown): GoogleErrorLike {
  const e = (err ?? {}) as GoogleErrorLike & { response?: { status?: number; data?: unknown } };
  // A GaxiosError's `code` is the HTTP status; a GoogleError (no `response`) carries google.rpc.Code already.
  const status = e.response?.status;
  if (typeof status !== 'number') return e;
  let body = e.response?.data as { error?: { message?: string; status?: string; details?: { reason?: string }[] } };
  if (!body?.error) {
    try {
      body = JSON.parse(String(e.message)) as typeof body;
    } catch {
      // Not Google's JSON error (a proxy's HTML page): the HTTP status alone says what happened.
      body = {};
    }
  }
  const error = body?.error ?? {};
  return {
    code: CODE_NAMES[error.status ?? ''] ?? HTTP_CODES[status] ?? 2,
    message: error.message ?? `HTTP ${status}`,
    reason: error.details?.find((d) => d?.reason)?.reason,
    details: error.details ? JSON.stringify(error.details) : undefined,
  };
}
export const codeOf = (err: unknown) => googleError(err).code;

/**
 * A quota that resets within minutes (ErrorInfo reason RATE_LIMIT_EXCEEDED, or a per-minute/second metric) is worth
 * retrying; a quota of resources (RESOURCE_QUOTA_EXCEEDED, a daily one) is not, until someone raises it.
 */
function isRateLimit(e: GoogleErrorLike): boolean {
  const text = `${String(e.message ?? '')} ${String(e.details ?? '')}`;
  if (e.reason === 'RATE_LIMIT_EXCEEDED') return true;
  if (e.reason === 'RESOURCE_QUOTA_EXCEEDED' || /per day/i.test(text)) return false;
  return true;
}

/** Google's message without values of the release's env (an echo of a bad value must not reach a log). */
function quoted(e: GoogleErrorLike, secrets: string[]): string {
  let text = String(e.message ?? 'no reason given')
    .replace(/^\d+ [A-Z_]+: /, '')
    .slice(0, 500);
  for (const s of secrets) if (s.length >= 4) text = text.split(s).join('…');
  return text;
}

/**
 * Google's error (https://cloud.google.com/apis/design/errors) as a CloudFailure when retrying cannot help, else as
 * is for Temporal's retry policy: UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, ABORTED and rate limits are transient.
 * `doing` names the call in the user's words ("creating the Cloud Run service").
 */
export function runError(err: unknown, doing: string, secrets: string[] = []): unknown {
  const e = googleError(err);
  const provider = 'cloud_a_run' as const;
  const reason = quoted(e, secrets);
  switch (e.code) {
    case CODE.UNAUTHENTICATED:
      return cloudFailure(CLOUD_FAILURES.credentialsRefused, {
        provider,
        message: `Google Cloud refused the service account's sign-in while ${doing}: "${reason}".`,
        hint: 'Create a new key for the service account (it may be deleted or disabled) and set the credentials again.',
      });
    case CODE.PERMISSION_DENIED:
      return cloudFailure(CLOUD_FAILURES.credentialsRefused, {
        provider,
        message: `The service account may not do this while ${doing}: "${reason}".`,
        hint:
          'Grant the service account the Cloud Run Admin (roles/run.admin), Service Account User and Logs Viewer ' +
          'roles in the project, and check the Cloud Run Admin API is enabled.',
      });
    case CODE.INVALID_ARGUMENT:
    case CODE.FAILED_PRECONDITION:
    case CODE.OUT_OF_RANGE:
    case CODE.NOT_FOUND:
      return cloudFailure(CLOUD_FAILURES.requestRefused, {
        provider,
        message: `Cloud Run refused the request while ${doing}: "${reason}".`,
        hint: 'Check the image reference, the region and the plan size; the quoted reason names what was wrong.',
      });
    case CODE.RESOURCE_EXHAUSTED:
      if (isRateLimit(e)) return transient(e, doing, reason);
      return cloudFailure(CLOUD_FAILURES.requestRefused, {
        provider,
        message: `A Google Cloud quota of the project is used up while ${doing}: "${reason}".`,
        hint: 'Ask for a higher quota in the console (IAM & Admin, Quotas) or remove unused services.',
      });
    default:
      if (typeof (e as { code?: unknown }).code === 'string' && String(e.code).startsWith('ERR_OSSL'))
        return cloudFailure(CLOUD_FAILURES.credentialsRefused, {
          provider,
          message: 'The service account key could not be used to sign in: its private_key is not a valid key.',
          hint: 'Download a new JSON key for the service account and set the credentials again.',
        });
      return typeof e.code === 'number' ? transient(e, doing, reason) : err;
  }
}

/**
 * A failure worth retrying, as a plain error in our words with Google's code: the SDK's error carries the request it
 * made (its headers and body, the env among them), which must not travel into the workflow's history.
 */
function transient(e: GoogleErrorLike, doing: string, reason: string): Error {
  const name = Object.entries(CODE_NAMES).find(([, c]) => c === e.code)?.[0] ?? String(e.code);
  return Object.assign(new Error(`Cloud Run answered ${name} while ${doing}: "${reason}"; retrying.`), {
    code: e.code,
  });
}
