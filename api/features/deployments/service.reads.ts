import { LABELS } from '@shared/constants';
import { deploymentNotFound } from '@shared/deployments/errors';
import type { StatusSnapshot } from '@shared/deployments/read-model';
import type { DeploymentRecord, DeploymentStatus, Provider } from '@shared/deployments/types';
import { type LogLine, readContainerLogs } from '@shared/engine/logs';
import type { Principal } from '@shared/identity/service';

import type { DeploymentServiceDeps } from './service.deps';

/** What a caller reads of its organisation's deployments: one, a list, and a deployment's logs. */
export function createDeploymentReads(
  deps: Pick<DeploymentServiceDeps, 'store' | 'model' | 'logs' | 'docker' | 'log'> & {
    authz: Pick<DeploymentServiceDeps['authz'], 'visibility'>;
  },
) {
  const { store, model } = deps;

  async function get(principal: Principal, id: string): Promise<DeploymentRecord> {
    const record = await store.get(principal.org._id, id);
    if (!record) throw deploymentNotFound(id);
    return record;
  }

  /**
   * What a status read shows, from the read model (shared/deployments/read-model.ts): one Redis read, no MongoDB.
   * An entry that is missing (never filled, expired, evicted, Redis down) is read from MongoDB and filled; one
   * of another organisation is absent, and a tombstone is a destroy.
   */
  async function status(principal: Principal, id: string): Promise<StatusSnapshot> {
    const entry = await model.read(id).catch((err: unknown) => {
      deps.log.warn({ err, deploymentId: id }, 'status read model unreadable; reading MongoDB');
      return { missing: true } as const;
    });
    if ('gone' in entry) throw deploymentNotFound(id);
    const snapshot = 'found' in entry ? entry.found : await model.fill(id);
    if (!snapshot || snapshot.record.orgId !== principal.org._id) throw deploymentNotFound(id);
    return snapshot;
  }

  return {
    get,
    status,

    list: (
      principal: Principal,
      q: {
        origin?: DeploymentRecord['origin'];
        status?: DeploymentStatus;
        provider?: Provider;
        projectId?: string;
        limit: number;
        offset: number;
      },
    ) =>
      // Below org admin, deployments of projects the caller is not a member of are left out (shared/authz).
      deps.authz
        .visibility(principal)
        .then((v) =>
          store.list({ orgId: principal.org._id, ...q, ...(v.all ? {} : { visibleProjects: v.projectIds }) }),
        ),

    /** Platform lines (build, system) first, then the container's own output; the last `limit`, oldest first. */
    async logs(principal: Principal, id: string, limit: number): Promise<LogLine[]> {
      await get(principal, id);
      const platform = await deps.logs.tail(id, limit);
      // By label, not by the record: a container that died during its start never made it into the record.
      const [latest] = (
        await deps.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } })
      ).sort((a, b) => Number(b.Labels[LABELS.revision]) - Number(a.Labels[LABELS.revision]));
      const container = latest ? await readContainerLogs(deps.docker, latest.Id, limit) : [];
      return [...platform, ...container].slice(-limit);
    },
  };
}

export type DeploymentReads = ReturnType<typeof createDeploymentReads>;
