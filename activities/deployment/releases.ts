import { createHmac } from 'node:crypto';

import { ApplicationFailure } from '@temporalio/common';

import { secretsKeyBytes } from '@shared/config';
import {
  type AttachmentStore,
  type EnvRefResolver,
  releaseAttachments,
  type ReleaseEnvRef,
  type ReleaseMount,
} from '@shared/deployments/attachments';
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
import type { VolumeStore } from '@shared/volumes/store';

import type { EngineVolumes } from '../providers/engine-volumes';
import type { DeploymentProvider, InstanceFilter, InstanceSpec } from '../providers/provider';

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

/** What the workflow remembers of a release it made: no env value, and its volumes by ID (one writer each). */
export interface CreatedRelease {
  revision: number;
  imageId: string;
  envNames: string[];
  /** Absent from releases made before attachments. */
  volumes?: string[];
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
  /** The deployment's attachments, which a new release copies (volumes mounted, environment references). */
  attachments: Pick<AttachmentStore, 'listByDeployment'>;
  /** Volumes' records and storage; without them a release that mounts a volume fails to start, saying so. */
  volumes?: { store: Pick<VolumeStore, 'get'>; storage: Pick<EngineVolumes, 'ensure' | 'mountSpec'> };
  /** Reads environment references' values; without one a release that has references fails to start, saying so. */
  envRefs?: EnvRefResolver;
}

/** The failure types a release's attachments fail its start with (non-retryable: a retry changes none of them). */
export const ATTACHMENT_FAILURES = {
  volumeUnavailable: 'VolumeUnavailable',
  envRefUnresolved: 'EnvRefUnresolved',
} as const;

/**
 * MongoDB writes of the deployment workflow (status, releases), and the instance starts that read the sealed env
 * values themselves: the workflow only ever names a release, the activity opens its values.
 */
export function createReleaseActivities(deps: ReleaseActivityDeps) {
  const { store, releases, logs, provider, env, config, edge } = deps;
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
  function configHash(
    r: NewRelease,
    values: Record<string, string>,
    attached: { mounts: ReleaseMount[]; envRefs: ReleaseEnvRef[] },
  ): string {
    const canonical = JSON.stringify({
      imageId: r.imageId,
      port: r.port,
      env: Object.keys(values)
        .sort()
        .map((k) => [k, values[k]]),
      // Only when there are any: a release without attachments hashes as it did before they existed.
      ...(attached.mounts.length ? { mounts: attached.mounts } : {}),
      ...(attached.envRefs.length ? { envRefs: attached.envRefs } : {}),
    });
    return `hmac-sha256:${createHmac('sha256', hashKey).update(canonical).digest('hex')}`;
  }

  /** The release's volumes as the engine mounts them, each one's storage ensured on this host first. */
  async function mountsFor(orgId: string, mounts: ReleaseMount[]) {
    if (!mounts.length) return [];
    const { volumes } = deps;
    if (!volumes)
      throw ApplicationFailure.nonRetryable(
        'this release mounts a volume, but this worker has no volume storage configured; the operator must give the worker its database',
        ATTACHMENT_FAILURES.volumeUnavailable,
      );
    const specs = [];
    for (const m of mounts) {
      const volume = await volumes.store.get(orgId, m.volumeId);
      if (!volume || volume.status !== 'ready')
        throw ApplicationFailure.nonRetryable(
          `volume ${m.volumeId} (mounted at ${m.mountPath}) is ${volume ? volume.status : 'gone'}, so this release cannot start; detach it (DELETE /deployments/{id}/volumes/${m.volumeId}) or wait until it is ready`,
          ATTACHMENT_FAILURES.volumeUnavailable,
        );
      const ref = { volumeId: volume._id, orgId: volume.orgId };
      await volumes.storage.ensure({ ...ref, sizeGb: volume.sizeGb });
      specs.push(volumes.storage.mountSpec(ref, m.mountPath));
    }
    return specs;
  }

  /**
   * The values of the release's references, from the resolver. Nothing of them is logged or returned to the workflow;
   * a resolver's own failure is passed on by its type and message only when it is ours to word (non-retryable).
   */
  async function resolveEnvRefs(orgId: string, deploymentId: string, revision: number, refs: ReleaseEnvRef[]) {
    if (!refs.length) return {};
    const names = refs.map((r) => r.name).join(', ');
    if (!deps.envRefs)
      throw ApplicationFailure.nonRetryable(
        `release ${revision} reads ${names} from other resources, but this worker cannot resolve such references; the operator must configure it (or unlink them and redeploy)`,
        ATTACHMENT_FAILURES.envRefUnresolved,
      );
    let values: Record<string, string>;
    try {
      values = await deps.envRefs(orgId, deploymentId, refs);
    } catch (err) {
      if (err instanceof ApplicationFailure) throw err;
      // Transient (a database not answering): retried; the driver's text is kept out, as it could quote a value.
      throw new Error(`reading the values of ${names} failed (${err instanceof Error ? err.name : 'unknown error'})`);
    }
    const missing = refs.filter((r) => typeof values[r.name] !== 'string').map((r) => r.name);
    if (missing.length)
      throw ApplicationFailure.nonRetryable(
        `no value could be read for ${missing.join(', ')}; check the resources they refer to exist and are ready, or unlink them`,
        ATTACHMENT_FAILURES.envRefUnresolved,
      );
    return Object.fromEntries(refs.map((r) => [r.name, values[r.name]!]));
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
    async createRelease(r: NewRelease): Promise<CreatedRelease> {
      const { envSealed } = await envFor(r);
      const source = await sourceFor(r);
      const values = envSealed ? env.open({ _id: r.deploymentId, orgId: r.orgId, envSealed }) : {};
      // The attachments as they are now: a rollback too keeps the deployment's current volumes and references.
      const attached = releaseAttachments(await deps.attachments.listByDeployment(r.deploymentId));
      // An earlier release's names include its references; what is sealed is what is plain, and nothing sealed is
      // no plain value at all (an empty env seals to nothing): a reference taken off does not live on as a name.
      const plain = envSealed ? Object.keys(values) : [];
      const envNames = [...new Set([...plain, ...attached.envRefs.map((x) => x.name)])].sort();
      const release: ReleaseRecord = {
        _id: releaseId(r.deploymentId, r.revision),
        deploymentId: r.deploymentId,
        orgId: r.orgId,
        revision: r.revision,
        image: r.image,
        imageId: r.imageId,
        port: r.port,
        configHash: configHash(r, values, attached),
        envNames,
        ...(envSealed ? { envSealed } : {}),
        mounts: attached.mounts,
        envRefs: attached.envRefs,
        trigger: r.trigger,
        ...(r.rollbackOf !== undefined ? { rollbackOf: r.rollbackOf } : {}),
        ...(source ? { source } : {}),
        createdAt: new Date(),
        status: 'starting',
      };
      const stored = await releases.insert(release);
      return {
        revision: stored.revision,
        imageId: stored.imageId,
        envNames: stored.envNames,
        volumes: (stored.mounts ?? []).map((m) => m.volumeId),
      };
    },
    async setReleaseStatus(input: { deploymentId: string; revision: number; status: ReleaseStatus }) {
      await releases.setStatus(input.deploymentId, input.revision, input.status, new Date());
    },

    prepareImage: (image: string, orgId: string) => provider.prepareImage(image, orgId),
    /**
     * Starts one replica of a release with the release's own env, opened here and nowhere else, its references'
     * values read here too, and its volumes mounted.
     */
    async startInstance(spec: Omit<InstanceSpec, 'env' | 'mounts'>) {
      const release = await releases.get(spec.deploymentId, spec.revision);
      const sealedBy = release ?? (await record(spec.deploymentId));
      const values = env.open({ _id: spec.deploymentId, orgId: spec.orgId, ...pickSealed(sealedBy) });
      const referenced = await resolveEnvRefs(spec.orgId, spec.deploymentId, spec.revision, release?.envRefs ?? []);
      const mounts = await mountsFor(spec.orgId, release?.mounts ?? []);
      return provider.startInstance({
        ...spec,
        env: { ...values, ...referenced },
        ...(mounts.length ? { mounts } : {}),
      });
    },
    waitInstanceReady: provider.waitInstanceReady.bind(provider),
    listInstances: provider.listInstances.bind(provider),
    stopInstances: provider.stopInstances.bind(provider),
    /**
     * Starts stopped instances again (the same containers, so the same mounts); their volumes' storage is ensured
     * first, as a host restart leaves it unmounted and a container over it would not start.
     */
    async startInstances(deploymentId: string, filter: InstanceFilter = {}) {
      const revisions =
        filter.revision !== undefined
          ? [filter.revision]
          : [...new Set((await provider.listInstances(deploymentId, filter)).map((i) => i.revision))];
      for (const revision of revisions) {
        const release = await releases.get(deploymentId, revision);
        if (release?.mounts?.length) await mountsFor(release.orgId, release.mounts);
      }
      return provider.startInstances(deploymentId, filter);
    },
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
