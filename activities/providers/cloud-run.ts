import { createHash } from 'node:crypto';

import { Logging } from '@google-cloud/logging';
import { protos, ServicesClient } from '@google-cloud/run';
import { JWT } from 'google-auth-library';

import type { RunCredentials } from '@shared/cloud/credentials';
import type { Config } from '@shared/config';
import type { LogQuery, ProviderLogLine } from '@shared/engine/observe';
import { ignore } from '@shared/ignore';

import { CLOUD_FAILURES, CLOUD_LABELS, type CloudAdapter, cloudFailure, type ManagedResource } from './cloud';
import {
  ALL_TO_LATEST,
  allTo,
  cloudRevision,
  CODE,
  codeOf,
  isoTime,
  manualScaling,
  phaseOf,
  releaseTemplate,
  revisionId,
  runError,
  serviceBody,
  serviceId,
  serviceLabels,
  serviceName,
  servingRevision,
} from './cloud-run-shapes';

/**
 * cloud_a_run (activities/providers/cloud.ts) on Google Cloud Run Admin API v2 with Google's official SDKs: a
 * deployment is one Cloud Run service, a release one of its revisions (`<service>-r<revision>`), replicas its manual
 * instance count (0 stops, cloud-run-shapes.ts `manualScaling`), logs come from Cloud Logging.
 *
 * The SDKs talk REST (their `fallback` mode, HTTP/1.1 JSON) so the endpoint settings can point them anywhere. They sign
 * their calls with a self-signed JWT of the service account (the SDK's default for service accounts: no token
 * exchange per call); only registryAuth exchanges it for an access token, at CLOUD_A_TOKEN_URL or Google's.
 *
 * Writes do not wait for Cloud Run to finish rolling out: an accepted operation is enough, status and the workflow's
 * waitServing do the waiting. destroy waits for its operation, so what it reports removed is gone.
 */

type AdapterConfig = Pick<Config, 'CLOUD_A_RUN_ENDPOINT' | 'CLOUD_A_LOGGING_ENDPOINT' | 'CLOUD_A_TOKEN_URL'>;
type Service = protos.google.cloud.run.v2.IService;
type ServicesOptions = NonNullable<ConstructorParameters<typeof ServicesClient>[0]>;
type LoggingOptions = NonNullable<ConstructorParameters<typeof Logging>[0]>;

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const SCOPES = ['https://www.googleapis.com/auth/cloud-platform'];
/**
 * Retries. The SDK's own (gax: UNAVAILABLE on reads, 1 s ×1.3 for up to 10 minutes) never fire in REST mode: its HTTP
 * client (gaxios, through google-auth-library) throws HTTP statuses, which gax does not take for gRPC codes. So the HTTP
 * client retries instead, reads only (GET: Get, List, operation polls), on 429 (rate limit), 502, 503 and 504, three
 * times with its backoff (0.5, 1.5, 3.5 s). Writes are not retried there (Google marks them non-idempotent); ours are,
 * so Temporal's retry policy retries them, and reads that still fail. A call gives up after 30 s.
 */
const HTTP_RETRY = {
  retry: 3,
  httpMethodsToRetry: ['GET'],
  statusCodesToRetry: [
    [429, 429],
    [502, 504],
  ],
};
const READ_CALL = { timeout: 30_000 };
/** Cloud Logging reads a page of at most 1000 entries (entries.list pageSize). */
const LOG_PAGE_MAX = 1000;
const MAX_TAIL = 10_000;
/** Logs with no `since` reach back this far (Cloud Logging's default retention); without it, 24 hours are searched. */
const LOGS_DEFAULT_SPAN_MS = 30 * 24 * 3600_000;
/** Clients kept per set of credentials: their signed tokens are cached inside. */
const MAX_CACHED = 50;

interface Clients {
  services: ServicesClient;
  logging: Logging;
  /** For registryAuth only: exchanges the key for an access token. */
  tokens: JWT;
}

/** `apiEndpoint`/`port`/`protocol` of a gax client from a URL setting; empty: the SDK's default (Google's). */
function endpoint(url: string) {
  if (!url) return {};
  const u = new URL(url);
  const protocol = u.protocol.replace(/:$/, '');
  return { apiEndpoint: u.hostname, port: Number(u.port) || (protocol === 'http' ? 80 : 443), protocol };
}

export function createRunAdapter(config: AdapterConfig): CloudAdapter<'cloud_a_run'> {
  const tokenUrl = config.CLOUD_A_TOKEN_URL || GOOGLE_TOKEN_URL;
  const cache = new Map<string, Clients>();

  /**
   * A JWT of the key whose token requests go to our token endpoint: google-auth-library posts to Google's fixed URL,
   * and the key's own token_uri was dropped when the credentials were parsed, so no tenant picks where we sign in.
   */
  function jwt(key: RunCredentials['serviceAccountKey']): JWT {
    const client = new JWT({
      email: key.client_email,
      key: key.private_key,
      keyId: key.private_key_id,
      scopes: SCOPES,
      // Node's own fetch rather than gaxios' default, node-fetch loaded by a dynamic import: one HTTP stack for the
      // worker, and one that loads in every module system the worker and its tests run in.
      transporterOptions: { fetchImplementation: fetch, retry: true, retryConfig: HTTP_RETRY },
    });
    client.transporter.interceptors.request.add({
      resolved: (opts) => {
        if (String(opts.url) === GOOGLE_TOKEN_URL) opts.url = new URL(tokenUrl);
        return Promise.resolve(opts);
      },
    });
    return client;
  }

  function clients(creds: RunCredentials): Clients {
    const k = creds.serviceAccountKey;
    const id = createHash('sha256')
      .update(JSON.stringify([k.client_email, k.private_key, k.project_id]))
      .digest('hex');
    const hit = cache.get(id);
    if (hit) return hit;
    // Logging passes its options on to its gapic client, which reads `fallback`, `port` and `protocol` too (its own
    // type names only the auth and endpoint ones).
    const loggingOptions: LoggingOptions & { fallback: boolean; port?: number; protocol?: string } = {
      fallback: true,
      projectId: k.project_id,
      authClient: jwt(k) as unknown as LoggingOptions['authClient'],
      ...endpoint(config.CLOUD_A_LOGGING_ENDPOINT),
    };
    const made: Clients = {
      // Each SDK client sets its own service path on its auth client: one JWT each.
      // Each SDK client sets its own service path on its auth client: one JWT each. The SDKs bundle their own copies
      // of google-auth-library, whose JWT types differ by private fields only; they call getRequestHeaders and fetch.
      services: new ServicesClient({
        fallback: true,
        authClient: jwt(k) as unknown as ServicesOptions['authClient'],
        ...endpoint(config.CLOUD_A_RUN_ENDPOINT),
      }),
      logging: new Logging(loggingOptions),
      tokens: jwt(k),
    };
    if (cache.size >= MAX_CACHED) {
      const [oldest, old] = cache.entries().next().value!;
      cache.delete(oldest);
      old.services.close().catch(ignore('a REST client holds no connection to close'));
    }
    cache.set(id, made);
    return made;
  }

  const parent = (creds: RunCredentials, region: string) =>
    `projects/${creds.serviceAccountKey.project_id}/locations/${region}`;
  const nameOf = (creds: RunCredentials, t: { deploymentId: string; region: string }) =>
    serviceName(creds.serviceAccountKey.project_id, t.region, t.deploymentId);

  /** The service, or null when there is none. */
  async function getService(creds: RunCredentials, name: string, doing: string): Promise<Service | null> {
    try {
      const [service] = await clients(creds).services.getService({ name }, READ_CALL);
      return service;
    } catch (err) {
      if (codeOf(err) === CODE.NOT_FOUND) return null;
      throw runError(err, doing);
    }
  }

  /** An operation Cloud Run accepted, unless it came back already failed. */
  function accepted(op: { latestResponse?: protos.google.longrunning.IOperation }, doing: string, secrets: string[]) {
    const error = op.latestResponse?.error;
    if (op.latestResponse?.done && error?.code) throw runError(error, doing, secrets);
  }

  async function update(creds: RunCredentials, service: Service, doing: string, secrets: string[] = []) {
    try {
      const [op] = await clients(creds).services.updateService({ service });
      accepted(op, doing, secrets);
    } catch (err) {
      // The revision this update names exists already: an earlier attempt of the same release made it.
      if (codeOf(err) === CODE.ALREADY_EXISTS) return;
      throw runError(err, doing, secrets);
    }
  }

  const adapter: CloudAdapter<'cloud_a_run'> = {
    provider: 'cloud_a_run',

    async verify(creds) {
      for (const region of creds.regions) {
        try {
          await clients(creds).services.listServices(
            { parent: parent(creds, region), pageSize: 1 },
            { ...READ_CALL, autoPaginate: false },
          );
        } catch (err) {
          throw runError(
            err,
            `listing the Cloud Run services of project ${creds.serviceAccountKey.project_id} in ${region}`,
          );
        }
      }
    },

    async deployRevision(creds, spec) {
      const name = nameOf(creds, spec);
      const revision = revisionId(spec.deploymentId, spec.revision);
      const secrets = Object.values(spec.env);
      const desired: Service = {
        labels: serviceLabels(spec.deploymentId, spec.orgId),
        // Public like the other providers' URLs: no IAM check on invocation (roles/run.admin may set it).
        invokerIamDisabled: true,
        ingress: 'INGRESS_TRAFFIC_ALL',
        template: releaseTemplate(spec),
        traffic: ALL_TO_LATEST,
        scaling: manualScaling(spec.replicas),
      };
      const doing = `deploying revision ${revision}`;
      let current = await getService(creds, name, doing);
      if (!current) {
        try {
          const [op] = await clients(creds).services.createService({
            parent: parent(creds, spec.region),
            serviceId: serviceId(spec.deploymentId),
            service: desired,
          });
          accepted(op, doing, secrets);
          return cloudRevision(revision);
        } catch (err) {
          if (codeOf(err) !== CODE.ALREADY_EXISTS) throw runError(err, doing, secrets);
          // Created meanwhile (an earlier attempt whose answer was lost): update it like any other.
          current = await getService(creds, name, doing);
          if (!current) throw err;
        }
      }
      if (current.template?.revision !== revision) await update(creds, serviceBody(current, desired), doing, secrets);
      return cloudRevision(revision);
    },

    async serveRevision(creds, target) {
      const doing = `sending the traffic to revision ${target.revision.name}`;
      const current = await getService(creds, nameOf(creds, target), doing);
      if (!current) throw absentService(doing);
      await update(
        creds,
        serviceBody(current, { traffic: allTo(target.revision.name), scaling: manualScaling(target.replicas) }),
        doing,
      );
    },

    async setReplicas(creds, target) {
      const doing = `setting the instance count to ${target.replicas}`;
      const current = await getService(creds, nameOf(creds, target), doing);
      if (!current) {
        if (target.replicas === 0) return;
        throw absentService(doing);
      }
      const scaling = current.scaling;
      if (String(scaling?.scalingMode) === 'MANUAL' && (scaling?.manualInstanceCount ?? 0) === target.replicas) return;
      await update(creds, serviceBody(current, { scaling: manualScaling(target.replicas) }), doing);
    },

    async status(creds, target) {
      const s = await getService(creds, nameOf(creds, target), 'reading the Cloud Run service');
      const at = new Date().toISOString();
      if (!s) return { phase: 'absent', serving: null, desiredReplicas: 0, runningReplicas: 0, url: null, at };
      const { phase, message } = phaseOf(s);
      const desired = s.scaling?.manualInstanceCount ?? 0;
      return {
        phase,
        serving: servingRevision(s),
        desiredReplicas: desired,
        // Cloud Run reports no instance count; with manual scaling a serving service runs exactly the desired one.
        runningReplicas: phase === 'serving' ? desired : 0,
        url: s.uri || null,
        ...(message ? { message } : {}),
        at: isoTime(s.terminalCondition?.lastTransitionTime) ?? isoTime(s.updateTime) ?? at,
      };
    },

    logs: (creds, target, query) => readLogs(clients(creds).logging, creds, target, query),

    async destroy(creds, target) {
      const name = nameOf(creds, target);
      const doing = 'deleting the Cloud Run service';
      try {
        const [op] = await clients(creds).services.deleteService({ name });
        await op.promise();
        return [name];
      } catch (err) {
        if (codeOf(err) === CODE.NOT_FOUND) return [];
        throw runError(err, doing);
      }
    },

    async registryAuth(creds) {
      try {
        const { token } = await clients(creds).tokens.getAccessToken();
        if (!token) throw new Error('Google answered the token request without an access token; retrying');
        return { username: 'oauth2accesstoken', password: token };
      } catch (err) {
        throw tokenError(err);
      }
    },

    async listManaged(creds) {
      const found: ManagedResource[] = [];
      for (const region of creds.regions) {
        try {
          for await (const s of clients(creds).services.listServicesAsync(
            { parent: parent(creds, region) },
            READ_CALL,
          )) {
            const labels = s.labels ?? {};
            if (labels[CLOUD_LABELS.managed] !== 'true' || !s.name) continue;
            found.push({
              deploymentId: labels[CLOUD_LABELS.deployment] ?? '',
              orgId: labels[CLOUD_LABELS.org] ?? '',
              id: s.name,
              kind: 'run.googleapis.com/Service',
              region,
            });
          }
        } catch (err) {
          throw runError(err, `listing the Cloud Run services in ${region}`);
        }
      }
      return found;
    },
  };
  return adapter;
}

const absentService = (doing: string) =>
  cloudFailure(CLOUD_FAILURES.requestRefused, {
    provider: 'cloud_a_run',
    message: `There is no Cloud Run service for this deployment while ${doing}: it was deleted outside Slipway.`,
    hint: 'Deploy the deployment again to recreate its service.',
  });

/** The token endpoint's refusal (RFC 6749 §5.2: 400 invalid_grant, 401 invalid_client) in our words. */
function tokenError(err: unknown): unknown {
  const status = (err as { status?: unknown; response?: { status?: unknown } }).response?.status;
  if (status === 400 || status === 401)
    return cloudFailure(CLOUD_FAILURES.credentialsRefused, {
      provider: 'cloud_a_run',
      message: 'Google refused to sign the service account in: its key is deleted, disabled or not this account’s.',
      hint: 'Create a new JSON key for the service account and set the credentials again.',
    });
  return runError(err, 'signing in to the registry');
}

/** Epoch milliseconds of a LogQuery `since` (ISO time or epoch seconds). */
function sinceMs(since: LogQuery['since']): number {
  if (since === undefined || since === '') return Date.now() - LOGS_DEFAULT_SPAN_MS;
  const ms = typeof since === 'number' || /^\d+(\.\d+)?$/.test(since) ? Number(since) * 1000 : Date.parse(since);
  if (!Number.isFinite(ms)) throw new TypeError(`since: ${String(since)} is neither an ISO time nor epoch seconds`);
  return ms;
}

/** A value inside a Logging filter's double quotes (https://cloud.google.com/logging/docs/view/logging-query-language). */
const quote = (v: string) => `"${v.replace(/["\\]/g, '\\$&')}"`;

async function readLogs(
  logging: Logging,
  creds: RunCredentials,
  target: { deploymentId: string; region: string },
  query: LogQuery,
): Promise<ProviderLogLine[]> {
  const tail = Math.min(Math.max(Math.floor(query.tail), 0), MAX_TAIL);
  if (!tail) return [];
  // The app's output only: stdout and stderr, not Cloud Run's request and system logs.
  const filter = [
    'resource.type="cloud_run_revision"',
    `resource.labels.service_name=${quote(serviceId(target.deploymentId))}`,
    `resource.labels.location=${quote(target.region)}`,
    `timestamp>=${quote(new Date(sinceMs(query.since)).toISOString())}`,
    '(log_id("run.googleapis.com/stdout") OR log_id("run.googleapis.com/stderr"))',
    ...(query.instance
      ? [`(labels.instanceId=${quote(query.instance)} OR resource.labels.revision_name=${quote(query.instance)})`]
      : []),
  ].join(' AND ');
  const lines: ProviderLogLine[] = [];
  let pageToken: string | undefined;
  try {
    do {
      const [entries, next] = await logging.getEntries({
        resourceNames: [`projects/${creds.serviceAccountKey.project_id}`],
        filter,
        orderBy: 'timestamp desc',
        pageSize: Math.min(tail - lines.length, LOG_PAGE_MAX),
        autoPaginate: false,
        ...(pageToken ? { pageToken } : {}),
      });
      for (const e of entries) {
        const m = e.metadata;
        const data: unknown = e.data;
        const message =
          typeof data === 'string'
            ? data
            : typeof (data as { message?: unknown } | null)?.message === 'string'
              ? (data as { message: string }).message
              : JSON.stringify(data ?? '');
        lines.push({
          timestamp: new Date((m.timestamp as Date | string | undefined) ?? 0).toISOString(),
          stream: String(m.logName ?? '').endsWith('stderr') ? 'stderr' : 'stdout',
          message,
          instance: m.labels?.instanceId ?? m.resource?.labels?.revision_name ?? '',
        });
      }
      pageToken = (next as { pageToken?: string } | null)?.pageToken || undefined;
    } while (pageToken && lines.length < tail);
  } catch (err) {
    throw runError(err, 'reading the service’s logs from Cloud Logging');
  }
  return lines.slice(0, tail).reverse();
}
