import type { ContainerApp, Revision } from '@azure/arm-appcontainers';
import { isRestError } from '@azure/core-rest-pipeline';

import type { ContainerAppsCredentials } from '@shared/cloud/credentials';

import {
  CLOUD_FAILURES,
  CLOUD_LABELS,
  cloudFailure,
  type CloudFailureType,
  type CloudReleaseSpec,
  cloudServiceName,
} from './cloud';

/**
 * What the Container Apps adapter (cloud-container-apps.ts) sends and how it reads Azure's answers and failures: the
 * pure half, no SDK client.
 */

/** Container Apps' name limit (32) and its revision naming: `<app>--<suffix>`. */
export const appName = (deploymentId: string) => cloudServiceName(deploymentId, 32);
/** Deterministic, so a retried deploy finds the revision it made; `-x<n>` marks a rescale of the same release. */
export const revisionSuffix = (revision: number, replicas?: number) =>
  replicas === undefined ? `r${revision}` : `r${revision}-x${replicas}`;
export const revisionName = (app: string, suffix: string) => `${app}--${suffix}`;
/** The release a revision name belongs to, or null for one we did not name. */
export function releaseOf(name: string): number | null {
  const m = /--r(\d+)(?:-x\d+)?$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** Azure spells a location "East US" or "eastus"; the credentials' regions use the second. */
export const normalLocation = (location: string) => location.replace(/\s+/g, '').toLowerCase();

/** The most Container Apps runs of one revision (its documented scale limit). */
export const MAX_REPLICAS = 1000;

/**
 * The sizes Container Apps sells on the Consumption profile: vCPU in steps of 0.25 up to 4, memory twice the vCPU in
 * Gi. The plan's limits are rounded up to the smallest pair covering both.
 */
const CPU_STEP = 0.25;
const MAX_STEPS = 16;
export function containerSize(limits: CloudReleaseSpec['limits']): { cpu: number; memory: string } | null {
  const steps = Math.max(1, Math.ceil(limits.cpus / CPU_STEP - 1e-9), Math.ceil(limits.memoryMb / 512 - 1e-9));
  if (!Number.isFinite(steps) || steps > MAX_STEPS) return null;
  return { cpu: steps * CPU_STEP, memory: `${steps / 2}Gi` };
}

/** Secret name of the registry password (Container Apps keeps it app-wide, referenced by `registries`). */
const REGISTRY_SECRET = 'registry-password';
const registryHost = (repository: string) => repository.split('/')[0]!;

/** Tags every app we create carries (CLOUD_LABELS), read back by listManaged. */
export const appTags = (spec: Pick<CloudReleaseSpec, 'deploymentId' | 'orgId'>) => ({
  [CLOUD_LABELS.managed]: 'true',
  [CLOUD_LABELS.deployment]: spec.deploymentId,
  [CLOUD_LABELS.org]: spec.orgId,
});

/**
 * The whole app as a release defines it (a PUT replaces the app): Multiple revisions mode so a kept revision can take
 * the traffic back, external ingress on the release's port with all traffic on the newest revision, a fixed replica
 * count. Env values are set as plain `value`s: secrets are app-wide in Container Apps, so a rollback would run the
 * kept revision with the newer release's values.
 */
export function appEnvelope(creds: ContainerAppsCredentials, spec: CloudReleaseSpec): ContainerApp {
  const size = containerSize(spec.limits);
  if (!size)
    throw failure(
      'requestRefused',
      `the plan's limits (${spec.limits.cpus} vCPU, ${spec.limits.memoryMb} MB) exceed what Container Apps sells (4 vCPU, 8 GiB)`,
      'choose a smaller plan for deployments on Azure Container Apps',
    );
  const registry = creds.registry;
  const pullsFromRegistry = registry && spec.image.startsWith(`${registryHost(registry.repository)}/`);
  return {
    location: spec.region,
    tags: appTags(spec),
    environmentId: creds.environmentId,
    configuration: {
      activeRevisionsMode: 'Multiple',
      ingress: {
        external: true,
        targetPort: spec.port,
        transport: 'auto',
        traffic: [{ latestRevision: true, weight: 100 }],
      },
      ...(pullsFromRegistry
        ? {
            secrets: [{ name: REGISTRY_SECRET, value: registry.password ?? creds.clientSecret }],
            registries: [
              {
                server: registryHost(registry.repository),
                username: registry.username ?? creds.clientId,
                passwordSecretRef: REGISTRY_SECRET,
              },
            ],
          }
        : {}),
    },
    template: {
      revisionSuffix: revisionSuffix(spec.revision),
      containers: [
        {
          name: 'app',
          image: spec.image,
          env: Object.entries(spec.env).map(([name, value]) => ({ name, value })),
          resources: size,
        },
      ],
      scale: { minReplicas: spec.replicas, maxReplicas: spec.replicas },
    },
  };
}

/** The revision the app's traffic goes to (the largest weight), by name; null before any revision is ready. */
export function servingRevisionName(app: ContainerApp): string | null {
  const traffic = [...(app.configuration?.ingress?.traffic ?? [])].sort((a, b) => (b.weight ?? 0) - (a.weight ?? 0));
  const top = traffic[0];
  if (!top) return app.latestReadyRevisionName ?? null;
  if (top.revisionName) return top.revisionName;
  // `latestRevision` follows the newest revision once ready; before that the previous one keeps the traffic.
  return app.latestRevisionName ?? app.latestReadyRevisionName ?? null;
}

/**
 * The revisions the app's traffic goes to or is about to: those named, and for `latestRevision` both the newest ready
 * one (which takes it now) and the newest (which takes it once ready).
 */
export function trafficRevisionNames(app: ContainerApp): string[] {
  return (app.configuration?.ingress?.traffic ?? [])
    .filter((t) => (t.weight ?? 0) > 0)
    .flatMap((t) =>
      t.revisionName ? [t.revisionName] : t.latestRevision ? [app.latestReadyRevisionName, app.latestRevisionName] : [],
    )
    .filter((n): n is string => !!n);
}

/** The active revisions to deactivate: all but those kept and any Azure reports taking traffic. */
export const revisionsToRetire = (revisions: readonly Revision[], keep: ReadonlySet<string>): string[] =>
  revisions
    .filter((r) => r.active && !!r.name && !keep.has(r.name) && !((r.trafficWeight ?? 0) > 0))
    .map((r) => r.name!);

/** Why a revision is not serving, from its reported states; undefined when it is healthy or still starting. */
export function revisionProblem(revision: Revision): string | undefined {
  if (revision.provisioningState === 'Failed' || revision.runningState === 'Failed')
    return `revision ${revision.name ?? ''} failed: ${revision.provisioningError ?? revision.runningState ?? 'no reason given'}`;
  if (revision.healthState === 'Unhealthy')
    return `revision ${revision.name ?? ''} is unhealthy: ${'its replicas fail their health checks'}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Failures

export const failure = (type: keyof typeof CLOUD_FAILURES, message: string, hint: string) =>
  cloudFailure(CLOUD_FAILURES[type] as CloudFailureType, { provider: 'cloud_b_container_apps', message, hint });

/** Azure's words quoted, with any secret or env value the request carried blanked out and the length capped. */
export function quote(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  return out.length > 400 ? `${out.slice(0, 400)}…` : out;
}

/** Entra ID's own code and reason (`AADSTS7000215: Invalid client secret provided.`), without trace and times. */
function aadsts(text: string): string {
  const m = /AADSTS\d+:[^.]*\./.exec(text);
  return m ? m[0] : (text.split(/\r?\n/)[0] ?? '');
}

/**
 * Entra ID's OAuth error codes that say "try again" rather than "these credentials will not do": Entra ID busy, or not
 * reached at all (MSAL's network_error, a failed endpoint discovery), which must never read as refused credentials.
 */
const SIGN_IN_TRANSIENT = new Set([
  'temporarily_unavailable',
  'server_error',
  'network_error',
  'endpoints_resolution_error',
]);

interface AzureErrorFacts {
  status?: number;
  code?: string;
  message: string;
  /** Entra ID's answer to a sign-in (AuthenticationError). */
  signIn?: boolean;
}

function factsOf(err: unknown): AzureErrorFacts {
  const e = err as {
    name?: string;
    statusCode?: number;
    code?: string;
    message?: string;
    errorResponse?: { error?: string; errorDescription?: string };
    details?: { error?: { code?: string; message?: string } };
  };
  if (e?.name === 'AuthenticationError')
    return {
      status: e.statusCode,
      code: e.errorResponse?.error,
      message: aadsts(e.errorResponse?.errorDescription ?? ''),
      signIn: true,
    };
  // @azure/identity hands Entra ID's refusal of the token request on as AuthenticationRequiredError, its message
  // MSAL's: `<oauth error>: Error(s): <codes> - Timestamp: … - Description: AADSTS…: <reason> Trace ID: …`.
  if (e?.name === 'AuthenticationRequiredError') {
    const m = /^(\w+):/.exec(e.message ?? '');
    return { code: m?.[1], message: aadsts(e.message ?? ''), signIn: true };
  }
  if (isRestError(err)) {
    const body = (e.details as { error?: { code?: string; message?: string } } | undefined)?.error;
    return { status: e.statusCode, code: body?.code ?? e.code, message: body?.message ?? e.message ?? '' };
  }
  // A long-running operation that ended Failed: core-lro's error carries the operation's code and message.
  return { code: typeof e?.code === 'string' ? e.code : undefined, message: e?.message ?? String(err) };
}

/**
 * Azure's failure as ours: refused credentials and refused requests are CloudFailures (retrying cannot help);
 * throttling, 5xx and network failures are thrown as plain errors for Temporal to retry, after the SDK's own retries
 * (which honour Retry-After). `what` names the call, `secrets` what must never appear in a message.
 */
export function azureFailure(err: unknown, what: string, ctx: { creds: ContainerAppsCredentials; secrets: string[] }) {
  const f = factsOf(err);
  const said = quote(`${f.code ? `${f.code}: ` : ''}${f.message}`, ctx.secrets);
  const { creds } = ctx;
  if (
    f.signIn &&
    (f.status === undefined || f.status < 500) &&
    f.status !== 429 &&
    !SIGN_IN_TRANSIENT.has(f.code ?? '')
  )
    return failure(
      'credentialsRefused',
      `Microsoft Entra ID refused the sign-in of client ${creds.clientId} in tenant ${creds.tenantId} (${said})`,
      'check tenantId and clientId, and that the client secret is the secret’s value (not its ID) and has not expired; create a new one under App registrations > Certificates & secrets',
    );
  if (f.status === 401 || f.status === 403)
    return failure(
      'credentialsRefused',
      `Azure refused to ${what} for client ${creds.clientId} (${f.status} ${said})`,
      `give the service principal the Contributor role (or Container Apps Contributor) on resource group ${creds.resourceGroup} of subscription ${creds.subscriptionId}, and Log Analytics Reader on the workspace for logs`,
    );
  if (f.status === 400 || f.status === 404 || f.status === 409 || f.status === 412 || f.status === 422)
    return failure(
      'requestRefused',
      `Azure refused to ${what} (${f.status} ${said})`,
      'correct what Azure names (image, port, size, region, the environment or resource group) and deploy again',
    );
  if (!f.signIn && f.status === undefined && f.code && f.code !== 'ECONNRESET' && !/^E[A-Z]+$/.test(f.code))
    return failure(
      'requestRefused',
      `Azure could not ${what}: the operation ended failed (${said})`,
      'correct what Azure names and deploy again; the app’s revisions show the details in the Azure portal',
    );
  // Retried: throttling (429), Azure's 5xx and network failures. A fresh error so no request or header rides along.
  return new Error(`Azure failed to ${what} (${f.status ?? 'no answer'} ${said}); it will be retried`);
}
