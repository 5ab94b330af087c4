import type { StatusFeed } from '../../../shared/deployments/status-feed';
import type { DeploymentRecord, DeploymentStatus } from '../../../shared/deployments/types';
import type { Principal } from '../../../shared/identity/service';

/** Statuses a deployment stays in until someone acts: a wait for any status also ends on these. */
export const SETTLED: readonly DeploymentStatus[] = ['running', 'stopped', 'failed'];

/**
 * The long-poll behind `GET …/deployments/{id}?wait=<status>&timeout=<s>`: one request that answers when the
 * deployment reaches `until` or any settled status, or when the timeout passes (with the status as it is then).
 * A deployment destroyed meanwhile answers 404 like any read of it.
 */
export function createDeploymentWaiter(deps: {
  feed: Pick<StatusFeed, 'watch'>;
  get: (principal: Principal, id: string) => Promise<DeploymentRecord>;
}) {
  return async function waitFor(
    principal: Principal,
    id: string,
    opts: { until: DeploymentStatus; timeoutS: number },
  ): Promise<DeploymentRecord> {
    const deadline = Date.now() + opts.timeoutS * 1000;
    const done = (r: DeploymentRecord) => r.status === opts.until || SETTLED.includes(r.status);
    // Checked first: an unknown or foreign ID is a 404 at once, before anything is subscribed.
    let record = await deps.get(principal, id);
    if (done(record)) return record;
    const watch = await deps.feed.watch(id);
    try {
      record = await deps.get(principal, id);
      while (!done(record) && Date.now() < deadline) {
        await watch.changed(deadline - Date.now());
        record = await deps.get(principal, id);
      }
      return record;
    } finally {
      watch.close();
    }
  };
}

export type DeploymentWaiter = ReturnType<typeof createDeploymentWaiter>;
