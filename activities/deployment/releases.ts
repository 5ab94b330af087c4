import { createHmac } from 'node:crypto';

import { ApplicationFailure } from '@temporalio/common';

import { secretsKeyBytes } from '@shared/config';
import type { LogStore } from '@shared/deployments/logs-store';
import {
  releaseId,
  type ReleaseRecord,
  type ReleaseSource,
  type ReleaseStatus,
  type ReleaseStore,
  type ReleaseTrigger,
} from '@shared/deployments/releases-store';
import type { DeploymentStore, StatusChange } from '@shared/deployments/store';
import { type DeploymentRecord, envNamesOf, type LastFailure } from '@shared/deployments/types';
import { EdgeHostTakenError, type EdgeRouter } from '@shared/edge/router';
import { deploymentHost, deploymentUrl, EdgeInputError } from '@shared/edge/routes';
import type { Sealed } from '@shared/secrets/box';
import type { EnvSealer } from '@shared/secrets/deployment-env';

import type { DeploymentProvider, InstanceSpec } from '../providers/provider';

/** Where a new release's environment comes from: never the values themselves, only where they are sealed. */
export type EnvSource =
  /** The deployment record's (the first release, or one made for a deployment from before releases). */
  | { from: 'record' }
  /** An env set the api stored for a redeploy. */
  | { from: 'set'; envRef: string }
  /** An earlier release's (a rollback brings its env back with its image). */
  | { from: 'release'; revision: number };

export interface NewRelease {
  deploymentId: string;
  orgId: string;
  revision: number;
  image: string;
  imageId: string;
  port: number;
  trigger: ReleaseTrigger;
  env: EnvSource;
  rollbackOf?: number;
  /** What the image was made from; absent, `sourceOf` names the release whose source this one carries on. */
  source?: ReleaseSource;
  sourceOf?: number;
}

/** What the edge router should do with a deployment's stable address (docs/architecture.md, "Edge router"). */
export type EdgeRoute = { kind: 'publish'; upstreams: string[] } | { kind: 'stopped' } | { kind: 'remove' };

export interface EdgeDeps {
  router: Pick<EdgeRouter, 'publish' | 'showStopped' | 'unpublish'>;
  domain: string;
  port: number;
}

/**
 * A status write as the workflow sends it: `lastFailure` without its time (the activity stamps it), and
 * `envOfRevision` to copy that release's env (names, sealed values) onto the record.
 */
export type RecordChange = Omit<StatusChange, 'lastFailure'> & {
  lastFailure?: Omit<LastFailure, 'at'> | null;
  envOfRevision?: number;
};

const unknownDeployment = (id: string) =>
  ApplicationFailure.nonRetryable(`deployment ${id} has no record`, 'DeploymentUnknown');

export interface ReleaseActivityDeps {
  store: Pick<DeploymentStore, 'recordStatus' | 'findAny'>;
  releases: Pick<ReleaseStore, 'insert' | 'get' | 'setStatus' | 'getEnvSet'>;
  logs: Pick<LogStore, 'append'>;
  provider: DeploymentProvider;
  env: Pick<EnvSealer, 'open' | 'seal'>;
  config: { SECRETS_KEY?: string | undefined };
  /** Absent until an edge router is configured: a deployment's url is then its first instance's own address. */
  edge?: EdgeDeps;
}

/**
 * MongoDB writes of the deployment workflow (status, releases), and the instance starts that read the sealed env
 * values themselves: the workflow only ever names a release, the activity opens its values.
 */
export function createReleaseActivities({ store, releases, logs, provider, env, config, edge }: ReleaseActivityDeps) {
  const hashKey = (config.SECRETS_KEY && secretsKeyBytes(config.SECRETS_KEY)) || Buffer.from('slipway-config-hash');

  async function record(deploymentId: string): Promise<DeploymentRecord> {
    const found = await store.findAny(deploymentId);
    if (!found) throw unknownDeployment(deploymentId);
    return found;
  }

  /** The names and sealed values a new release runs with, wherever they come from. */
  async function envFor(r: NewRelease): Promise<{ envNames: string[]; envSealed?: Sealed }> {
    if (r.env.from === 'set') {
      const set = await releases.getEnvSet(r.env.envRef);
      // Another deployment's set would open with the wrong binding anyway; say so plainly instead.
      if (!set || set.deploymentId !== r.deploymentId || set.orgId !== r.orgId) {
        throw ApplicationFailure.nonRetryable(`environment ${r.env.envRef} is not this deployment's`, 'EnvSetUnknown');
      }
      return { envNames: set.envNames, ...(set.envSealed ? { envSealed: set.envSealed } : {}) };
    }
    if (r.env.from === 'release') {
      const from = await releases.get(r.deploymentId, r.env.revision);
      if (!from) throw ApplicationFailure.nonRetryable(`release ${r.env.revision} is unknown`, 'ReleaseUnknown');
      return { envNames: from.envNames, ...(from.envSealed ? { envSealed: from.envSealed } : {}) };
    }
    const d = await record(r.deploymentId);
    // Records from before sealing hold values in the clear: the release gets them sealed.
    const envSealed = d.envSealed ?? (d.envVars ? env.seal(d, d.envVars) : undefined);
    return { envNames: envNamesOf(d), ...(envSealed ? { envSealed } : {}) };
  }

  /** The release's source: given (a repository URL never keeps credentials), or carried on from an earlier one. */
  async function sourceFor(r: NewRelease): Promise<ReleaseSource | undefined> {
    if (r.source?.type === 'git') return { ...r.source, repoUrl: withoutCredentials(r.source.repoUrl) };
    if (r.source) return r.source;
    if (r.sourceOf === undefined) return undefined;
    return (await releases.get(r.deploymentId, r.sourceOf))?.source;
  }

  /** A digest of everything that makes the release behave: keyed, so it reveals nothing about the values. */
  function configHash(r: NewRelease, d: Pick<DeploymentRecord, '_id' | 'orgId'>, envSealed?: Sealed): string {
    const values = envSealed ? env.open({ ...d, envSealed }) : {};
    const canonical = JSON.stringify({
      imageId: r.imageId,
      port: r.port,
      env: Object.keys(values)
        .sort()
        .map((k) => [k, values[k]]),
    });
    return `hmac-sha256:${createHmac('sha256', hashKey).update(canonical).digest('hex')}`;
  }

  return {
    /** A status write; `envOfRevision` also puts that release's env (names, sealed values) on the record. */
    async recordStatus(change: RecordChange): Promise<void> {
      const { envOfRevision, lastFailure, ...others } = change;
      const rest: StatusChange = {
        ...others,
        ...(lastFailure !== undefined ? { lastFailure: lastFailure && { ...lastFailure, at: new Date() } } : {}),
      };
      if (envOfRevision === undefined) {
        await store.recordStatus(rest);
        return;
      }
      const release = await releases.get(change.deploymentId, envOfRevision);
      if (!release) throw ApplicationFailure.nonRetryable(`release ${envOfRevision} is unknown`, 'ReleaseUnknown');
      await store.recordStatus({ ...rest, envNames: release.envNames, envSealed: release.envSealed ?? null });
    },
    async appendLog(input: { deploymentId: string; stream: 'build' | 'system'; messages: string[] }): Promise<void> {
      await logs.append(input.deploymentId, input.stream, input.messages);
    },

    /** Inserts the release (idempotent on its revision); returns what the workflow remembers of it. */
    async createRelease(r: NewRelease): Promise<{ revision: number; imageId: string; envNames: string[] }> {
      const { envNames, envSealed } = await envFor(r);
      const source = await sourceFor(r);
      const d = { _id: r.deploymentId, orgId: r.orgId };
      const release: ReleaseRecord = {
        _id: releaseId(r.deploymentId, r.revision),
        deploymentId: r.deploymentId,
        orgId: r.orgId,
        revision: r.revision,
        image: r.image,
        imageId: r.imageId,
        port: r.port,
        configHash: configHash(r, d, envSealed),
        envNames: [...envNames].sort(),
        ...(envSealed ? { envSealed } : {}),
        trigger: r.trigger,
        ...(r.rollbackOf !== undefined ? { rollbackOf: r.rollbackOf } : {}),
        ...(source ? { source } : {}),
        createdAt: new Date(),
        status: 'starting',
      };
      const stored = await releases.insert(release);
      return { revision: stored.revision, imageId: stored.imageId, envNames: stored.envNames };
    },
    async setReleaseStatus(input: { deploymentId: string; revision: number; status: ReleaseStatus }) {
      await releases.setStatus(input.deploymentId, input.revision, input.status, new Date());
    },

    prepareImage: (image: string, orgId: string) => provider.prepareImage(image, orgId),
    /** Starts one replica of a release with the release's own env, opened here and nowhere else. */
    async startInstance(spec: Omit<InstanceSpec, 'env'>) {
      const release = await releases.get(spec.deploymentId, spec.revision);
      const sealedBy = release ?? (await record(spec.deploymentId));
      const values = env.open({ _id: spec.deploymentId, orgId: spec.orgId, ...pickSealed(sealedBy) });
      return provider.startInstance({ ...spec, env: values });
    },
    waitInstanceReady: provider.waitInstanceReady.bind(provider),
    listInstances: provider.listInstances.bind(provider),
    stopInstances: provider.stopInstances.bind(provider),
    startInstances: provider.startInstances.bind(provider),
    removeInstances: provider.removeInstances.bind(provider),
    pruneImages: provider.pruneImages.bind(provider),
    diagnoseInstance: provider.diagnose.bind(provider),

    /**
     * Points the deployment's stable address at `route`; one atomic switch on the router. Returns that address, or
     * null when no router is configured (the caller shows an instance's own address instead).
     */
    async routeTraffic(input: { deploymentId: string; route: EdgeRoute }): Promise<{ url: string | null }> {
      if (!edge) return { url: null };
      const at = { domain: edge.domain, port: edge.port };
      // The name as the record has it, so the address is the one the api computes for the same deployment.
      const { name } = await record(input.deploymentId);
      const host = deploymentHost(name, input.deploymentId, edge.domain);
      try {
        if (input.route.kind === 'publish') await edge.router.publish(input.deploymentId, host, input.route.upstreams);
        else if (input.route.kind === 'stopped') await edge.router.showStopped(input.deploymentId, host);
        else await edge.router.unpublish(input.deploymentId);
      } catch (err) {
        // A taken host or a bad input will not heal by retrying; a router that did not answer may.
        if (err instanceof EdgeHostTakenError || err instanceof EdgeInputError)
          throw ApplicationFailure.nonRetryable(err.message, err.name);
        throw err;
      }
      return { url: input.route.kind === 'remove' ? null : deploymentUrl(name, input.deploymentId, at) };
    },
  };
}

/** A repository URL as a release shows it: user and password dropped, should one ever have got this far. */
function withoutCredentials(repoUrl: string): string {
  const url = new URL(repoUrl);
  if (!url.username && !url.password) return repoUrl;
  url.username = '';
  url.password = '';
  return url.toString();
}

function pickSealed(d: { envSealed?: Sealed; envVars?: Record<string, string> }) {
  return { ...(d.envSealed ? { envSealed: d.envSealed } : {}), ...(d.envVars ? { envVars: d.envVars } : {}) };
}
