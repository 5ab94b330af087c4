import type { EdgeRoute, EdgeRouter } from '../edge';
import { type EdgeReadings, parseCaddyMetrics } from './edge-counters';

/**
 * Which deployment a host belongs to, from the routes the router holds now: each deployment's route names its stable
 * host. Other kinds of route that name hosts (a custom domain) add their owners here.
 */
export function hostOwners(routes: readonly Pick<EdgeRoute, 'deploymentId' | 'host'>[]): Map<string, string> {
  return new Map(routes.map((r) => [r.host, r.deploymentId]));
}

/**
 * One reading of the router's per-host counters, stored as read (run by the metrics schedule, beside the instances'
 * samples), for the hosts of our routes. The owners are read first: a host whose route is added between the two reads
 * is left out of this reading, and its counters are counted whole by the next.
 */
export function createEdgeSampler(deps: {
  router: Pick<EdgeRouter, 'ensureHostMetrics' | 'counters' | 'list'>;
  /** The router's identity in readings: its admin address. */
  edge: string;
  readings: Pick<EdgeReadings, 'insert'>;
}) {
  return {
    async sample(at = new Date()): Promise<number> {
      await deps.router.ensureHostMetrics();
      const owners = hostOwners(await deps.router.list());
      const { text, server } = await deps.router.counters();
      const { epoch, hosts } = parseCaddyMetrics(text, server);
      await deps.readings.insert({
        _id: `${deps.edge}|${at.getTime()}`,
        edge: deps.edge,
        at,
        epoch,
        // Only our deployments' hosts are kept: any client can make the router count a Host header of its choosing.
        hosts: [...hosts].flatMap(([host, c]) => {
          const deploymentId = owners.get(host);
          return deploymentId ? [{ host, deploymentId, ...c }] : [];
        }),
      });
      return owners.size;
    },
  };
}

export type EdgeSampler = ReturnType<typeof createEdgeSampler>;
