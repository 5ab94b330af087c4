import { log } from '@temporalio/activity';
import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import type { ReconcileCounts, ReconcileRemoval } from '@shared/contracts/reconcile';
import type { DeploymentStore } from '@shared/deployments/store';
import type { EnvSealer } from '@shared/secrets/deployment-env';

import { createRouteReconcileActivities } from './routes';

/** Destroy intents this old or younger are checked on every sweep; an unfinished one is found within a sweep. */
const INTENT_WINDOW_MS = 24 * 3600 * 1000;
const REPORTED = 100;
const SEAL_BATCH = 100;

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

/**
 * The reconciler's engine side (docs/architecture.md, "A deployment's lifecycle, as workflows"). It judges only objects
 * carrying this instance's label — other Slipway instances (another database, another task queue) share the engine and
 * their objects are not ours to judge — and only objects older than the grace, so a deployment whose record and
 * workflow are being created right now is never touched. Removed: what belongs to a destroyed deployment (or one asked
 * to be) or to one this instance's database does not know; then org networks nothing of ours uses any more.
 */
export function createReconcileActivities(
  deps: {
    docker: Docker;
    store: Pick<DeploymentStore, 'lifecycle' | 'finishDestroyIntents' | 'withPlainEnv' | 'sealEnv' | 'routing'>;
    env: Pick<EnvSealer, 'seal'>;
    instance: string;
    graceS: number;
  } & Pick<Parameters<typeof createRouteReconcileActivities>[0], 'instances' | 'edge' | 'verifiedDomains'>,
) {
  const { docker, store } = deps;
  const mine = { label: [`${LABELS.instance}=${deps.instance}`] };
  const oldEnough = (createdS: number) => createdS * 1000 <= Date.now() - deps.graceS * 1000;

  /** The verdict on each deployment of these objects: removable ones map to their reason. */
  async function verdicts(ids: string[]): Promise<Map<string, 'destroyed' | 'unknown'>> {
    const known = ids.length ? await store.lifecycle([...new Set(ids)]) : new Map<string, 'live' | 'destroyed'>();
    const out = new Map<string, 'destroyed' | 'unknown'>();
    for (const id of ids) {
      const state = known.get(id);
      if (state !== 'live') out.set(id, state ?? 'unknown');
    }
    return out;
  }

  async function candidates() {
    const containers = (await docker.listContainers({ all: true, filters: mine })).filter(
      (c) => c.Labels[LABELS.deploymentId] && oldEnough(c.Created),
    );
    const images = (await docker.listImages({ filters: mine })).filter(
      (i) => i.Labels?.[LABELS.deploymentId] && oldEnough(i.Created),
    );
    const ids = [
      ...containers.map((c) => c.Labels[LABELS.deploymentId]!),
      ...images.map((i) => i.Labels[LABELS.deploymentId]!),
    ];
    return { containers, images, judged: await verdicts(ids) };
  }

  return {
    ...createRouteReconcileActivities(deps),

    /**
     * Finishes destroys an api left half done (intent written, record still visible) and names the destroyed
     * deployments that still hold engine objects: the reconcile workflow sends each workflow its destroy.
     */
    async planReconcile(): Promise<{ hidden: string[]; destroyed: string[] }> {
      // Records from before env values were sealed get sealed now, a batch per run (docs/architecture.md, "A
      // deployment's lifecycle, as workflows").
      for (const r of await store.withPlainEnv(SEAL_BATCH)) {
        const envVars = r.envVars ?? {};
        let sealed;
        try {
          sealed = deps.env.seal(r, envVars);
        } catch {
          log.warn('SECRETS_KEY is not set: env values of older deployments stay unsealed in MongoDB');
          break;
        }
        await store.sealEnv(r._id, Object.keys(envVars).sort(), sealed);
      }
      const hidden = await store.finishDestroyIntents(new Date(Date.now() - INTENT_WINDOW_MS));
      for (const id of hidden) log.warn('reconciler finished a destroy the api left half done', { deploymentId: id });
      const { judged } = await candidates();
      const destroyed = [...judged].filter(([, why]) => why === 'destroyed').map(([id]) => id);
      return { hidden, destroyed: [...new Set([...hidden, ...destroyed])] };
    },

    /** Removes this instance's objects of destroyed or unknown deployments, and its org networks left unused. */
    async removeOrphans(): Promise<ReconcileCounts> {
      const counts: ReconcileCounts = { containers: 0, images: 0, networks: 0, removed: [] };
      const note = (r: ReconcileRemoval) => {
        log.warn(`reconciler removed ${r.kind} ${r.name}`, { ...r });
        if (counts.removed.length < REPORTED) counts.removed.push(r);
      };
      // Gone, or being removed by someone else (a deployment workflow finishing its own destroy) right now.
      const gone = (err: unknown) => {
        if (statusCode(err) !== 404 && statusCode(err) !== 409) throw err;
      };
      // Counted when removed by us, not by someone else just before.
      const removedNow = (p: Promise<unknown>) =>
        p.then(
          () => true,
          (err: unknown) => {
            gone(err);
            return false;
          },
        );
      const { containers, images, judged } = await candidates();

      for (const c of containers) {
        const deploymentId = c.Labels[LABELS.deploymentId]!;
        const reason = judged.get(deploymentId);
        if (!reason) continue;
        if (!(await removedNow(docker.getContainer(c.Id).remove({ force: true, v: true })))) continue;
        counts.containers++;
        note({ kind: 'container', id: c.Id, name: c.Names[0]?.replace(/^\//, '') ?? c.Id, deploymentId, reason });
      }
      for (const i of images) {
        const deploymentId = i.Labels[LABELS.deploymentId]!;
        const reason = judged.get(deploymentId);
        if (!reason) continue;
        if (!(await removedNow(docker.getImage(i.Id).remove({ force: true })))) continue;
        counts.images++;
        note({ kind: 'image', id: i.Id, name: i.RepoTags?.[0] ?? i.Id, deploymentId, reason });
      }

      // An org network goes once no container of ours (running or not) names the org: a stopped deployment
      // still needs its network to start again.
      const orgsInUse = new Set(
        (await docker.listContainers({ all: true, filters: mine })).map((c) => c.Labels[LABELS.orgId]),
      );
      for (const n of await docker.listNetworks({ filters: mine })) {
        const orgId = n.Labels?.[LABELS.orgId];
        if (!orgId || orgsInUse.has(orgId) || !oldEnough(Date.parse(n.Created) / 1000)) continue;
        const info = await docker
          .getNetwork(n.Id)
          .inspect()
          .catch((err: unknown) => {
            gone(err);
            return undefined;
          });
        if (!info || Object.keys(info.Containers ?? {}).length > 0) continue;
        try {
          await docker.getNetwork(n.Id).remove();
        } catch (err) {
          // A deploy of the org attached a container since: the network is in use again.
          if (statusCode(err) === 403 || statusCode(err) === 409) continue;
          gone(err);
        }
        counts.networks++;
        note({ kind: 'network', id: n.Id, name: n.Name, reason: 'unused' });
      }
      return counts;
    },
  };
}

export type ReconcileActivities = ReturnType<typeof createReconcileActivities>;
