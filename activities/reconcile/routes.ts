import { log } from '@temporalio/activity';
import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import type { RoutesRestored } from '@shared/contracts/reconcile';
import type { DeploymentStore } from '@shared/deployments/store';
import { deploymentHost, type EdgeRouter, type WantedDomain, type WantedRoute } from '@shared/edge';

import type { DeploymentProvider } from '../providers/provider';

/**
 * The reconciler's router side: puts back what the edge router lost for this instance's deployments (its route after
 * a restart, which loads no config; the upstream files a running route reads, without which it answers the stopped
 * page). It only adds what is missing (shared/edge/router.ts, `restore`), so a switch the deployment's own workflow
 * makes meanwhile always wins. Judged from records that say `running` or `stopped`: a stop writes `stopping` before
 * it touches the route, and a start `deploying`, so neither is undone halfway.
 */
export function createRouteReconcileActivities(deps: {
  docker: Docker;
  store: Pick<DeploymentStore, 'routing'>;
  instances: Pick<DeploymentProvider, 'listInstances'>;
  instance: string;
  edge?: { router: Pick<EdgeRouter, 'restore' | 'restoreDomains'>; domain: string };
  /** Verified custom domains, whose routes on the TLS server are put back too (a domain's route never changes). */
  verifiedDomains?: () => Promise<WantedDomain[]>;
}) {
  return {
    async restoreRoutes(): Promise<RoutesRestored> {
      const restored: RoutesRestored = { routes: 0, files: 0 };
      if (!deps.edge) return restored;
      if (deps.verifiedDomains) {
        const domains = await deps.edge.router.restoreDomains(await deps.verifiedDomains());
        if (domains) {
          log.warn('reconciler restored custom domain routes the edge router had lost', { domains });
          restored.domains = domains;
        }
      }
      const containers = await deps.docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.instance}=${deps.instance}`, LABELS.deploymentId] },
      });
      const ids = [...new Set(containers.map((c) => c.Labels[LABELS.deploymentId]!))];
      if (ids.length === 0) return restored;
      const wanted: WantedRoute[] = [];
      for (const record of await deps.store.routing(ids)) {
        if (record.status !== 'running' && record.status !== 'stopped') continue;
        const host = deploymentHost(record.name, record._id, deps.edge.domain);
        if (record.status === 'stopped') {
          wanted.push({ deploymentId: record._id, host, upstreams: [] });
          continue;
        }
        const serving = (await deps.instances.listInstances(record._id, { revision: record.revision }))
          .filter((i) => i.state === 'running' && i.upstream)
          .sort((a, b) => a.replica - b.replica);
        // Nothing runs to route to: the deployment's workflow or its restart policy is the one to act.
        if (serving.length) wanted.push({ deploymentId: record._id, host, upstreams: serving.map((i) => i.upstream!) });
      }
      for (const r of await deps.edge.router.restore(wanted)) {
        log.warn('reconciler restored what the edge router had lost', { ...r });
        if (r.route) restored.routes++;
        restored.files += r.files.length;
      }
      return restored;
    },
  };
}
