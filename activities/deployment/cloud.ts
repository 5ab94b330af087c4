import { Context, heartbeat, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Docker from 'dockerode';

import type { CloudCredentialsOf, CloudProvider } from '@shared/cloud/credentials';
import { cloudFailureDetails } from '@shared/cloud/failures';
import type { CloudCredentialStore } from '@shared/cloud/store';
import type { CloudCredentialsCheck as CredentialsCheck } from '@shared/contracts/cloud-credentials';
import type { DeploymentRecord } from '@shared/deployments/types';
import type { LogQuery, ProviderLogLine } from '@shared/engine/observe';
import type { Sealed } from '@shared/secrets/box';
import type { EnvSealer } from '@shared/secrets/deployment-env';

import {
  CLOUD_FAILURES,
  type CloudAdapter,
  cloudFailure,
  type CloudRevision,
  cloudServiceName,
  type CloudServiceStatus,
} from '../providers/cloud';

/** Cloud accounts the reconciler lists and cleans at once. */
const RECONCILE_ACCOUNTS_AT_ONCE = 4;

export type CloudAdapters = { [P in CloudProvider]?: CloudAdapter<P> };

export interface CloudActivityDeps {
  credentials: Pick<CloudCredentialStore, 'open' | 'openCandidate' | 'dropCandidate' | 'holders'>;
  /** Which deployments are live, for the reconciler's verdict on what it finds in the clouds. */
  lifecycle(ids: string[]): Promise<Map<string, 'live' | 'destroyed'>>;
  adapters: CloudAdapters;
  /** The release a revision runs: its sealed env is opened here, as the engine's instances open theirs. */
  releaseEnv(deploymentId: string, revision: number): Promise<{ envSealed?: Sealed } | null>;
  record(deploymentId: string): Promise<Pick<DeploymentRecord, '_id' | 'orgId' | 'envSealed'>>;
  env: Pick<EnvSealer, 'open'>;
  /** Pushes source builds to the organisation's registry; without it a source deploy to a cloud fails saying so. */
  docker?: Docker;
  /** How often the serving wait asks the cloud (ms); tests make it short. */
  pollMs?: number;
}

export interface CloudTarget {
  deploymentId: string;
  orgId: string;
  provider: CloudProvider;
  region: string;
}

/**
 * The cloud providers' side of the deployment workflow (workflows/deployment/cloud.ts): each call opens the
 * organisation's credentials from the vault (never from history) and hands them to the cloud's adapter.
 */
export function createCloudActivities(deps: CloudActivityDeps) {
  function adapterOf<P extends CloudProvider>(provider: P): CloudAdapter<P> {
    const adapter = deps.adapters[provider] as CloudAdapter<P> | undefined;
    if (!adapter)
      throw cloudFailure(CLOUD_FAILURES.requestRefused, {
        provider,
        message: `This server has no adapter for ${provider}.`,
        hint: 'Ask the operator which cloud providers this server runs, or deploy to another provider.',
      });
    return adapter;
  }

  async function opened<P extends CloudProvider>(orgId: string, provider: P): Promise<CloudCredentialsOf[P]> {
    const credentials = await deps.credentials.open(orgId, provider);
    if (!credentials)
      throw cloudFailure(CLOUD_FAILURES.credentialsRefused, {
        provider,
        message: `The organisation has no credentials for ${provider} any more.`,
        hint: `Set them again with PUT /platform/providers/${provider}/credentials, then redeploy.`,
      });
    return credentials;
  }

  const on = async <T>(t: CloudTarget, call: (a: CloudAdapter, c: never) => Promise<T>): Promise<T> =>
    call(adapterOf(t.provider) as CloudAdapter, (await opened(t.orgId, t.provider)) as never);

  async function status(t: CloudTarget): Promise<CloudServiceStatus> {
    return on(t, (a, c) => a.status(c, { deploymentId: t.deploymentId, region: t.region }));
  }

  return {
    /** Tries credentials given to a PUT with the cloud's read-only call; the api saves them only when they work. */
    async cloudCheckCredentials(candidateId: string): Promise<CredentialsCheck> {
      const candidate = await deps.credentials.openCandidate(candidateId);
      if (!candidate) throw ApplicationFailure.nonRetryable(`candidate ${candidateId} is gone`, 'CandidateGone');
      try {
        await (adapterOf(candidate.provider) as CloudAdapter).verify(candidate.credentials as never);
        return { ok: true };
      } catch (err) {
        const details = cloudFailureDetails(err);
        if (err instanceof ApplicationFailure && err.nonRetryable && details) {
          await deps.credentials.dropCandidate(candidateId);
          return {
            ok: false,
            type: err.type ?? 'CloudRequestRefused',
            message: details.message,
            hint: details.hint,
          };
        }
        throw err;
      }
    },

    /** A new revision of the deployment's service taking all traffic, with the release's env opened here. */
    async cloudDeployRevision(
      input: CloudTarget & {
        revision: number;
        image: string;
        port: number;
        replicas: number;
        limits: { memoryMb: number; cpus: number };
      },
    ): Promise<CloudRevision> {
      const release = await deps.releaseEnv(input.deploymentId, input.revision);
      const sealedBy = release ?? (await deps.record(input.deploymentId));
      const env = sealedBy.envSealed
        ? deps.env.open({ _id: input.deploymentId, orgId: input.orgId, envSealed: sealedBy.envSealed })
        : {};
      return on(input, (a, c) =>
        a.deployRevision(c, {
          deploymentId: input.deploymentId,
          orgId: input.orgId,
          revision: input.revision,
          image: input.image,
          port: input.port,
          env,
          replicas: input.replicas,
          limits: input.limits,
          region: input.region,
        }),
      );
    },

    async cloudServeRevision(input: CloudTarget & { revision: CloudRevision; replicas: number }): Promise<void> {
      await on(input, (a, c) =>
        a.serveRevision(c, {
          deploymentId: input.deploymentId,
          region: input.region,
          revision: input.revision,
          replicas: input.replicas,
        }),
      );
    },

    async cloudSetReplicas(input: CloudTarget & { replicas: number }): Promise<void> {
      await on(input, (a, c) =>
        a.setReplicas(c, { deploymentId: input.deploymentId, region: input.region, replicas: input.replicas }),
      );
    },

    cloudStatus: status,

    /**
     * Waits until the cloud serves `revision` with its replicas (the URL it answers at), heartbeating between asks;
     * a revision the cloud reports failed, or one still not serving after `timeoutS`, fails non-retryably with the
     * cloud's reason in our words.
     */
    async cloudWaitServing(
      input: CloudTarget & { revision: CloudRevision; replicas: number; timeoutS: number },
    ): Promise<{ url: string | null }> {
      const deadline = Date.now() + input.timeoutS * 1000;
      const every = deps.pollMs ?? 2000;
      let last: CloudServiceStatus | undefined;
      for (;;) {
        last = await status(input);
        heartbeat(last.phase);
        const ours = last.serving?.name === input.revision.name;
        if (input.replicas === 0 && last.phase === 'stopped') return { url: last.url };
        if (ours && last.phase === 'serving' && last.runningReplicas >= Math.min(1, input.replicas))
          return { url: last.url };
        if (last.phase === 'failed')
          throw cloudFailure(CLOUD_FAILURES.revisionFailed, {
            provider: input.provider,
            message: last.message ?? `${input.provider} reports revision ${input.revision.name} failed.`,
            hint: 'Read the deployment’s logs for why the app did not start, fix it and redeploy.',
          });
        if (Date.now() > deadline)
          throw cloudFailure(CLOUD_FAILURES.revisionFailed, {
            provider: input.provider,
            message: `Revision ${input.revision.name} was not serving after ${input.timeoutS} s (${last.phase}${last.message ? `: ${last.message}` : ''}).`,
            hint: 'Check that the app listens on the deployment’s port and starts within that time, then redeploy.',
          });
        await Context.current().sleep(every);
      }
    },

    /** Everything the deployment holds in its cloud; idempotent. */
    async cloudDestroy(input: CloudTarget): Promise<string[]> {
      const removed = await on(input, (a, c) =>
        a.destroy(c, { deploymentId: input.deploymentId, region: input.region }),
      );
      log.info('cloud resources removed', { deploymentId: input.deploymentId, provider: input.provider, removed });
      return removed;
    },

    /**
     * The clouds' side of the reconciler: in every account an organisation gave us, whatever carries our labels and
     * belongs to a deployment that is destroyed (its workflow's destroy did not finish) or that no record names is
     * removed, so nothing billable outlives its deployment. Only resources labelled with that same organisation are
     * judged: an account shared with another installation keeps what is not ours.
     */
    async cloudReconcile(): Promise<CloudReconcileReport> {
      const report: CloudReconcileReport = { accounts: 0, removed: [], failed: 0 };
      // A few accounts at a time: one whose cloud does not answer costs its SDK's retries, not the whole sweep's.
      const holders = await deps.credentials.holders();
      const sweep = async ({ orgId, provider }: (typeof holders)[number]) => {
        const adapter = deps.adapters[provider] as CloudAdapter | undefined;
        const credentials = adapter && (await deps.credentials.open(orgId, provider));
        if (!adapter || !credentials) return;
        try {
          const found = (await adapter.listManaged(credentials as never)).filter((r) => r.orgId === orgId);
          report.accounts++;
          const verdict = found.length
            ? await deps.lifecycle([...new Set(found.map((r) => r.deploymentId))])
            : new Map();
          const leaked = new Map<string, string>();
          for (const r of found)
            if (verdict.get(r.deploymentId) !== 'live') leaked.set(`${r.deploymentId}/${r.region}`, r.region);
          for (const [key, region] of leaked) {
            const deploymentId = key.slice(0, key.lastIndexOf('/'));
            const resources = await adapter.destroy(credentials as never, { deploymentId, region });
            heartbeat(key);
            log.warn('cloud resources of a deployment that is not live removed', { provider, deploymentId, resources });
            report.removed.push({ provider, deploymentId, resources });
          }
        } catch (err) {
          report.failed++;
          log.warn('a cloud account could not be reconciled; the next sweep tries again', {
            provider,
            orgId,
            error: err instanceof Error ? err.message : String(err),
          });
        }
      };
      for (let i = 0; i < holders.length; i += RECONCILE_ACCOUNTS_AT_ONCE)
        await Promise.all(holders.slice(i, i + RECONCILE_ACCOUNTS_AT_ONCE).map(sweep));
      return report;
    },

    async cloudLogs(input: CloudTarget & { query: LogQuery }): Promise<ProviderLogLine[]> {
      return on(input, (a, c) => a.logs(c, { deploymentId: input.deploymentId, region: input.region }, input.query));
    },

    /**
     * Pushes a source deploy's image, built here, to the organisation's registry for its cloud, as
     * `<repository>/<service>:r<revision>`; returns the reference by digest, so the cloud runs exactly what was built.
     */
    async cloudPushImage(input: CloudTarget & { revision: number; localImage: string }): Promise<{ image: string }> {
      const credentials = await opened(input.orgId, input.provider);
      const registry = credentials.registry;
      if (!registry || !deps.docker)
        throw cloudFailure(CLOUD_FAILURES.requestRefused, {
          provider: input.provider,
          message: `A source deploy to ${input.provider} needs a registry to push the build to, and ${registry ? 'this worker has no engine to push from' : 'the organisation’s credentials name none'}.`,
          hint: `Add "registry": {"repository": "host/path"} to PUT /platform/providers/${input.provider}/credentials, or deploy an image.`,
        });
      const auth = registry.username
        ? { username: registry.username, password: registry.password! }
        : await (adapterOf(input.provider) as CloudAdapter).registryAuth(credentials as never);
      const repo = `${registry.repository}/${cloudServiceName(input.deploymentId, 63)}`;
      const tag = `r${input.revision}`;
      await deps.docker.getImage(input.localImage).tag({ repo, tag });
      const serveraddress = registry.repository.split('/')[0]!;
      const stream = await deps.docker.getImage(`${repo}:${tag}`).push({ authconfig: { ...auth, serveraddress } });
      const digest = await new Promise<string>((resolve, reject) => {
        let found = '';
        deps.docker!.modem.followProgress(
          stream,
          (err: Error | null) => (err ? reject(err) : resolve(found)),
          (event: { error?: string; aux?: { Digest?: string } }) => {
            heartbeat();
            if (event.error) reject(new Error(event.error));
            if (event.aux?.Digest) found = event.aux.Digest;
          },
        );
      }).catch((err: unknown) => {
        throw cloudFailure(CLOUD_FAILURES.requestRefused, {
          provider: input.provider,
          message: `The registry ${serveraddress} refused the push of the build: ${(err as Error).message.slice(0, 300)}`,
          hint: 'Check that the credentials may push to the registry’s repository, then redeploy.',
        });
      });
      return { image: digest ? `${repo}@${digest}` : `${repo}:${tag}` };
    },
  };
}

export type CloudActivities = ReturnType<typeof createCloudActivities>;

export interface CloudReconcileReport {
  /** Organisation-and-cloud pairs whose resources were listed. */
  accounts: number;
  /** Deployments whose resources were removed: destroyed ones, and ones no record names. */
  removed: { provider: CloudProvider; deploymentId: string; resources: string[] }[];
  /** Accounts that could not be listed or cleaned (credentials refused, cloud down): tried again next sweep. */
  failed: number;
}
