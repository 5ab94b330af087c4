import { createHash } from 'node:crypto';

import { type ContainerApp, ContainerAppsAPIClient, type Revision } from '@azure/arm-appcontainers';
import type { CommonClientOptions } from '@azure/core-client';
import { isRestError } from '@azure/core-rest-pipeline';
import { AzureAuthorityHosts, ClientSecretCredential } from '@azure/identity';
import { LogsQueryClient, type LogsTable } from '@azure/monitor-query-logs';
import { ApplicationFailure } from '@temporalio/common';

import type { ContainerAppsCredentials } from '@shared/cloud/credentials';
import type { Config } from '@shared/config';
import type { LogQuery, ProviderLogLine } from '@shared/engine/observe';

import { CLOUD_LABELS, type CloudAdapter, type CloudServiceStatus, type ManagedResource } from './cloud';
import {
  appEnvelope,
  appName,
  azureFailure,
  failure,
  MAX_REPLICAS,
  normalLocation,
  releaseOf,
  revisionName,
  revisionProblem,
  revisionsToRetire,
  revisionSuffix,
  servingRevisionName,
  trafficRevisionNames,
} from './cloud-container-apps-shapes';

/**
 * cloud_b_container_apps (activities/providers/cloud.ts) on Azure Container Apps, with Azure's official SDKs: a
 * deployment is one container app in the credentials' resource group and environment, a release one of its revisions
 * (`<app>--r<revision>`), logs come from the environment's Log Analytics workspace.
 *
 * Stopping uses the app's stop operation, not a scale of 0: scale is part of the revision template in Container Apps,
 * so changing it makes a new revision, while stop keeps every revision, the traffic split and the URL as they were,
 * and start brings back the same revision with the same replica count.
 *
 * Old revisions are deactivated, not left running: in Multiple mode a revision without traffic stays active and runs
 * (and bills) its minimum replicas. An inactive revision is still kept, so a rollback can activate it again.
 * - deployRevision deactivates, before it creates the new revision, every active one that neither takes traffic nor
 *   is about to: the one serving now must stay, since the new one is not serving yet and a failed release sends the
 *   traffic back to it. So at most two run: the serving one and the one serving before it, which the next deploy or
 *   rollback deactivates. Deactivating it as soon as the new one serves would need a call after the workflow's wait,
 *   and status, the only call made then, is read-only.
 * - serveRevision (a rollback, or the traffic going back after a failed release) activates its target and waits for it
 *   to run before the traffic moves, so no request meets a revision with no replica; then deactivates all the others.
 * - setReplicas making a revision for another count deactivates as deployRevision does; going back to a count it made
 *   a revision for before, it serves that one as serveRevision does.
 */

export interface ContainerAppsDeps {
  /** Entra ID's host; without it @azure/identity reads AZURE_AUTHORITY_HOST, else the public cloud's. */
  authorityHost?: string;
  /**
   * Options for every SDK client of this adapter, set by the server's code only (tests trust their replay's CA with
   * `tlsOptions` and shorten `retryOptions`); the SDK's retry policy and its Retry-After handling stay on.
   */
  clientOptions?: Pick<CommonClientOptions, 'tlsOptions' | 'retryOptions'>;
  /**
   * How often long-running operations are polled (the SDK's default: 2 s, or Azure's Retry-After), and a revision
   * being activated (2 s).
   */
  pollIntervalMs?: number;
}

type AdapterConfig = Pick<Config, 'CLOUD_B_ARM_ENDPOINT' | 'CLOUD_B_LOGS_ENDPOINT'>;

const ARM_DEFAULT = 'https://management.azure.com';
const LOGS_DEFAULT = 'https://api.loganalytics.io';
/** Logs with no `since` reach back this far (the workspace's default retention is 30 days). */
const LOGS_DEFAULT_SPAN = 'P30D';
const MAX_TAIL = 10_000;
/** Clients kept per set of credentials: their tokens are cached inside, so a call does not sign in again. */
const MAX_CACHED = 50;
/**
 * How long one call waits for an activated revision to run before giving up for Temporal to retry it: under the cloud
 * activities' heartbeat timeout (2 minutes), which an adapter cannot feed.
 */
const ACTIVATION_WAIT_MS = 90_000;
const ACTIVATION_POLL_MS = 2000;

interface Clients {
  arm: ContainerAppsAPIClient;
  logs: LogsQueryClient;
}

export function createContainerAppsAdapter(
  config: AdapterConfig,
  deps: ContainerAppsDeps = {},
): CloudAdapter<'cloud_b_container_apps'> {
  const armEndpoint = (config.CLOUD_B_ARM_ENDPOINT || ARM_DEFAULT).replace(/\/+$/, '');
  // The SDK appends its API version itself only to its default endpoint.
  const logsEndpoint = `${(config.CLOUD_B_LOGS_ENDPOINT || LOGS_DEFAULT).replace(/\/+$/, '')}/v1`;
  const authorityHost = deps.authorityHost ?? process.env.AZURE_AUTHORITY_HOST;
  const cache = new Map<string, Clients>();
  const lro = deps.pollIntervalMs === undefined ? {} : { updateIntervalInMs: deps.pollIntervalMs };

  function clients(creds: ContainerAppsCredentials): Clients {
    const key = createHash('sha256')
      .update(JSON.stringify([creds.tenantId, creds.clientId, creds.clientSecret, creds.subscriptionId]))
      .digest('hex');
    const hit = cache.get(key);
    if (hit) return hit;
    const credential = new ClientSecretCredential(creds.tenantId, creds.clientId, creds.clientSecret, {
      ...deps.clientOptions,
      ...(authorityHost ? { authorityHost } : {}),
      // MSAL validates an authority it does not know by asking login.microsoftonline.com; a private cloud's (or a
      // test's) authority is the server's own setting, so it is trusted as is instead.
      disableInstanceDiscovery:
        !!authorityHost &&
        !(Object.values(AzureAuthorityHosts) as string[]).includes(authorityHost.replace(/\/+$/, '')),
    });
    const made = {
      arm: new ContainerAppsAPIClient(credential, creds.subscriptionId, {
        ...deps.clientOptions,
        endpoint: armEndpoint,
      }),
      logs: new LogsQueryClient(credential, { ...deps.clientOptions, endpoint: logsEndpoint }),
    };
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, made);
    return made;
  }

  const secretsOf = (creds: ContainerAppsCredentials, env: Record<string, string> = {}) => [
    creds.clientSecret,
    ...(creds.registry?.password ? [creds.registry.password] : []),
    ...Object.values(env),
  ];

  /** Runs one Azure call, its failure turned into ours (azureFailure). */
  async function call<T>(
    creds: ContainerAppsCredentials,
    what: string,
    run: (c: Clients) => Promise<T>,
    env?: Record<string, string>,
  ): Promise<T> {
    try {
      return await run(clients(creds));
    } catch (err) {
      if (err instanceof ApplicationFailure) throw err;
      throw azureFailure(err, what, { creds, secrets: secretsOf(creds, env) });
    }
  }

  /** The app, or null when there is none (Azure's 404). */
  async function getApp(creds: ContainerAppsCredentials, app: string): Promise<ContainerApp | null> {
    try {
      return await clients(creds).arm.containerApps.get(creds.resourceGroup, app);
    } catch (err) {
      if (isRestError(err) && err.statusCode === 404) return null;
      throw azureFailure(err, `read container app ${app}`, { creds, secrets: secretsOf(creds) });
    }
  }

  async function getRevision(creds: ContainerAppsCredentials, app: string, name: string): Promise<Revision | null> {
    try {
      return await clients(creds).arm.containerAppsRevisions.getRevision(creds.resourceGroup, app, name);
    } catch (err) {
      if (isRestError(err) && err.statusCode === 404) return null;
      throw azureFailure(err, `read revision ${name}`, { creds, secrets: secretsOf(creds) });
    }
  }

  const checkReplicas = (replicas: number, min: number) => {
    if (!Number.isInteger(replicas) || replicas < min || replicas > MAX_REPLICAS)
      throw failure(
        'requestRefused',
        `${replicas} replicas: Container Apps runs ${min} to ${MAX_REPLICAS} of a revision`,
        `ask for a whole number of replicas from ${min} to ${MAX_REPLICAS}`,
      );
  };

  /** Sends all traffic to one revision, by name (a PATCH of the ingress' traffic only: no new revision). */
  const routeTo = (creds: ContainerAppsCredentials, app: string, location: string, name: string) =>
    call(creds, `send the traffic of ${app} to ${name}`, (c) =>
      c.arm.containerApps.beginUpdateAndWait(
        creds.resourceGroup,
        app,
        { location, configuration: { ingress: { traffic: [{ revisionName: name, weight: 100 }] } } },
        lro,
      ),
    );

  /**
   * Deactivates every active revision of the app but those in `keep` and those Azure reports taking traffic: an
   * inactive revision runs no replica and is kept for a rollback to activate.
   */
  async function retireOthers(creds: ContainerAppsCredentials, app: string, keep: ReadonlySet<string>) {
    const revisions = await call(creds, `list the revisions of container app ${app}`, async (c) => {
      const all: Revision[] = [];
      for await (const r of c.arm.containerAppsRevisions.listRevisions(creds.resourceGroup, app)) all.push(r);
      return all;
    });
    for (const name of revisionsToRetire(revisions, keep))
      try {
        await clients(creds).arm.containerAppsRevisions.deactivateRevision(creds.resourceGroup, app, name);
      } catch (err) {
        // Deleted since the listing (Azure keeps only so many inactive revisions): nothing left to run.
        if (isRestError(err) && err.statusCode === 404) continue;
        throw azureFailure(err, `deactivate revision ${name}`, { creds, secrets: secretsOf(creds) });
      }
  }

  /** Waits for an activated revision to run, so the traffic never moves to a revision with no replica. */
  async function untilRunning(creds: ContainerAppsCredentials, app: string, name: string) {
    const deadline = Date.now() + ACTIVATION_WAIT_MS;
    for (;;) {
      const revision = await getRevision(creds, app, name);
      if (!revision)
        throw failure(
          'requestRefused',
          `revision ${name} of container app ${app} no longer exists`,
          'redeploy the release instead of rolling back to it',
        );
      const problem = revisionProblem(revision);
      if (problem)
        throw failure('revisionFailed', problem, 'read the deployment’s logs for why it did not start, then redeploy');
      if (revision.runningState === 'Running' && (revision.replicas ?? 0) >= 1) return;
      if (Date.now() > deadline)
        // Plain: Temporal retries the call, which activates again (a no-op) and waits on.
        throw new Error(
          `revision ${name} of container app ${app} is not running ${ACTIVATION_WAIT_MS / 1000} s after its activation (${revision.runningState ?? 'no state'}); it will be retried`,
        );
      await new Promise((r) => setTimeout(r, deps.pollIntervalMs ?? ACTIVATION_POLL_MS));
    }
  }

  /**
   * Before a new revision of the app is made: the one serving stays (see the header), since the new one is not
   * serving yet; the others are deactivated.
   */
  const retireBeside = (creds: ContainerAppsCredentials, current: ContainerApp, app: string, next: string) =>
    retireOthers(creds, app, new Set([...trafficRevisionNames(current), next]));

  /** A kept revision takes all the traffic: activated, running, routed to; the others deactivated. */
  async function serveKept(creds: ContainerAppsCredentials, current: ContainerApp, app: string, name: string) {
    await call(creds, `activate revision ${name}`, (c) =>
      c.arm.containerAppsRevisions.activateRevision(creds.resourceGroup, app, name),
    );
    // A stopped app runs no replica of any revision until it is started.
    if (current.runningStatus !== 'Stopped') await untilRunning(creds, app, name);
    await routeTo(creds, app, current.location, name);
    await retireOthers(creds, app, new Set([name]));
  }

  return {
    provider: 'cloud_b_container_apps',

    async verify(creds) {
      const m =
        /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.App\/managedEnvironments\/([^/]+)$/i.exec(
          creds.environmentId,
        );
      if (!m)
        throw failure(
          'requestRefused',
          `environmentId is not a Container Apps environment's resource ID`,
          'copy the environment’s Resource ID from its JSON View in the Azure portal: /subscriptions/…/resourceGroups/…/providers/Microsoft.App/managedEnvironments/<name>',
        );
      const [, , envGroup, envName] = m;
      await call(creds, `list the container apps of resource group ${creds.resourceGroup}`, async (c) => {
        // One page is enough to prove the sign-in and the read permission.
        await c.arm.containerApps.listByResourceGroup(creds.resourceGroup).byPage().next();
      });
      const environment = await call(creds, `read the Container Apps environment ${envName!}`, (c) =>
        c.arm.managedEnvironments.get(envGroup!, envName!),
      );
      const location = normalLocation(environment.location);
      if (!creds.regions.map(normalLocation).includes(location))
        throw failure(
          'requestRefused',
          `the environment ${envName!} is in ${location}, which the credentials' regions (${creds.regions.join(', ')}) do not name`,
          `list ${location} among the regions: a container app runs in its environment's region`,
        );
    },

    async deployRevision(creds, spec) {
      checkReplicas(spec.replicas, 1);
      const app = appName(spec.deploymentId);
      const suffix = revisionSuffix(spec.revision);
      const name = revisionName(app, suffix);
      // Built first: a release Container Apps cannot run is refused before anything is deactivated.
      const envelope = appEnvelope(creds, spec);
      const current = await getApp(creds, app);
      if (current) await retireBeside(creds, current, app, name);
      await call(
        creds,
        `deploy revision ${suffix} of container app ${app}`,
        (c) => c.arm.containerApps.beginCreateOrUpdateAndWait(creds.resourceGroup, app, envelope, lro),
        spec.env,
      );
      return { revision: spec.revision, name };
    },

    async serveRevision(creds, target) {
      const app = appName(target.deploymentId);
      const current = await getApp(creds, app);
      if (!current)
        throw failure('requestRefused', `container app ${app} does not exist`, 'deploy the deployment again');
      await serveKept(creds, current, app, target.revision.name);
    },

    async setReplicas(creds, target) {
      checkReplicas(target.replicas, 0);
      const app = appName(target.deploymentId);
      const current = await getApp(creds, app);
      if (!current)
        throw failure('requestRefused', `container app ${app} does not exist`, 'deploy the deployment again');
      const stopped = current.runningStatus === 'Stopped';
      if (target.replicas === 0) {
        if (!stopped)
          await call(creds, `stop container app ${app}`, (c) =>
            c.arm.containerApps.beginStopAndWait(creds.resourceGroup, app, lro),
          );
        return;
      }
      const serving = servingRevisionName(current);
      const revision = serving ? await getRevision(creds, app, serving) : null;
      const release = serving ? releaseOf(serving) : null;
      if (revision?.template && release !== null && revision.template.scale?.minReplicas !== target.replicas) {
        // Scale belongs to the revision template: another count is another revision of the same release, named by
        // its count so a retry (or a later return to it) finds the one it made.
        const suffix = revisionSuffix(release, target.replicas);
        const name = revisionName(app, suffix);
        if (await getRevision(creds, app, name)) await serveKept(creds, current, app, name);
        else {
          await retireBeside(creds, current, app, name);
          await call(creds, `scale container app ${app} to ${target.replicas}`, (c) =>
            c.arm.containerApps.beginUpdateAndWait(
              creds.resourceGroup,
              app,
              {
                location: current.location,
                configuration: { ingress: { traffic: [{ latestRevision: true, weight: 100 }] } },
                template: {
                  ...revision.template,
                  revisionSuffix: suffix,
                  scale: { minReplicas: target.replicas, maxReplicas: target.replicas },
                },
              },
              lro,
            ),
          );
        }
      }
      if (stopped)
        await call(creds, `start container app ${app}`, (c) =>
          c.arm.containerApps.beginStartAndWait(creds.resourceGroup, app, lro),
        );
    },

    async status(creds, target) {
      const app = appName(target.deploymentId);
      const at = new Date().toISOString();
      const current = await getApp(creds, app);
      if (!current) return { phase: 'absent', serving: null, desiredReplicas: 0, runningReplicas: 0, url: null, at };
      const fqdn = current.configuration?.ingress?.fqdn;
      const url = fqdn ? `https://${fqdn}` : null;
      const name = servingRevisionName(current);
      const revision = name ? await getRevision(creds, app, name) : null;
      const release = name ? releaseOf(name) : null;
      const serving = name && release !== null ? { revision: release, name } : null;
      const desiredReplicas = revision?.template?.scale?.minReplicas ?? current.template?.scale?.minReplicas ?? 0;
      const base = { serving, desiredReplicas, runningReplicas: revision?.replicas ?? 0, url, at };
      const state = current.provisioningState;
      if (state === 'Failed' || state === 'Canceled')
        return { ...base, phase: 'failed', message: `Azure reports the app's last change ${state.toLowerCase()}` };
      if (state === 'Deleting') return { ...base, phase: 'absent', message: 'the app is being deleted' };
      if (current.runningStatus === 'Stopped') return { ...base, phase: 'stopped', runningReplicas: 0 };
      const problem = revision ? revisionProblem(revision) : undefined;
      if (problem) return { ...base, phase: 'failed', message: problem };
      const ready =
        state === 'Succeeded' &&
        !!revision &&
        revision.runningState === 'Running' &&
        (revision.replicas ?? 0) >= desiredReplicas;
      return { ...base, phase: ready ? 'serving' : 'deploying' } satisfies CloudServiceStatus;
    },

    async logs(creds, target, query) {
      if (!creds.logAnalyticsWorkspaceId)
        throw failure(
          'requestRefused',
          'the credentials name no Log Analytics workspace, so Azure has no logs to give',
          'add logAnalyticsWorkspaceId (the Workspace ID on the Overview page of the workspace the environment writes to) to the credentials',
        );
      if (!Number.isFinite(query.tail)) throw new TypeError('tail must be a number of lines');
      if (query.instance !== undefined && !/^[\w.-]{1,200}$/.test(query.instance))
        throw new TypeError('instance must be a replica name (letters, digits, . - _)');
      const tail = Math.max(0, Math.min(MAX_TAIL, Math.floor(query.tail)));
      const since = sinceDate(query.since);
      const app = appName(target.deploymentId);
      const kql = [
        'ContainerAppConsoleLogs_CL',
        `| where ContainerAppName_s == '${app}'`,
        ...(since ? [`| where TimeGenerated >= datetime(${since.toISOString()})`] : []),
        ...(query.instance ? [`| where ContainerGroupName_s == '${query.instance}'`] : []),
        `| top ${tail} by TimeGenerated desc`,
        '| project TimeGenerated, Stream_s, Log_s, ContainerGroupName_s, RevisionName_s',
      ].join('\n');
      const result = await call(creds, `query the logs of ${app}`, (c) =>
        c.logs.queryWorkspace(
          creds.logAnalyticsWorkspaceId!,
          kql,
          since ? { startTime: since, endTime: new Date() } : { duration: LOGS_DEFAULT_SPAN },
        ),
      );
      const tables = result.status === 'Success' ? result.tables : result.partialTables;
      return tables.flatMap(linesOf).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    },

    async destroy(creds, target) {
      const app = appName(target.deploymentId);
      let first: number | undefined;
      try {
        await clients(creds).arm.containerApps.beginDeleteAndWait(creds.resourceGroup, app, {
          ...lro,
          onResponse: (r) => void (first ??= r.status),
        });
      } catch (err) {
        if (isRestError(err) && err.statusCode === 404) return [];
        throw azureFailure(err, `delete container app ${app}`, { creds, secrets: secretsOf(creds) });
      }
      // ARM answers 204 to a delete of what does not exist.
      return first === 204 ? [] : [`containerApps/${app}`];
    },

    registryAuth(creds) {
      const r = creds.registry;
      // ACR takes a service principal's client ID and secret as a registry sign-in.
      return Promise.resolve(
        r?.username && r.password
          ? { username: r.username, password: r.password }
          : { username: creds.clientId, password: creds.clientSecret },
      );
    },

    async listManaged(creds) {
      const found: ManagedResource[] = [];
      await call(creds, `list the container apps of resource group ${creds.resourceGroup}`, async (c) => {
        for await (const a of c.arm.containerApps.listByResourceGroup(creds.resourceGroup)) {
          const tags = a.tags ?? {};
          const deploymentId = tags[CLOUD_LABELS.deployment];
          const orgId = tags[CLOUD_LABELS.org];
          if (tags[CLOUD_LABELS.managed] !== 'true' || !deploymentId || !orgId || !a.id) continue;
          found.push({
            deploymentId,
            orgId,
            id: a.id,
            kind: 'Microsoft.App/containerApps',
            region: normalLocation(a.location),
          });
        }
      });
      return found;
    },
  };
}

function sinceDate(since: LogQuery['since']): Date | undefined {
  if (since === undefined) return undefined;
  const d = typeof since === 'number' ? new Date(since * 1000) : new Date(since);
  if (Number.isNaN(d.getTime()) || d.getTime() < 0) throw new TypeError('since must be an ISO time or epoch seconds');
  return d;
}

/** Rows of ContainerAppConsoleLogs_CL as lines, by column name (the query projects them, Azure may reorder). */
function linesOf(table: LogsTable): ProviderLogLine[] {
  const col = (name: string) => table.columnDescriptors.findIndex((c) => c.name === name);
  const [t, s, l, g] = ['TimeGenerated', 'Stream_s', 'Log_s', 'ContainerGroupName_s'].map(col);
  return table.rows.map((row) => {
    const time = row[t!];
    return {
      timestamp: time instanceof Date ? time.toISOString() : String(time),
      stream: row[s!] === 'stderr' ? 'stderr' : 'stdout',
      message: String(row[l!] ?? ''),
      instance: String(row[g!] ?? ''),
    };
  });
}
