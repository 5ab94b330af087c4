import type { StatusSnapshot } from '@shared/deployments/read-model';
import type { StatusFeed, StatusWatch } from '@shared/deployments/status-feed';
import type { DeploymentRecord, DeploymentStatus } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

/** Statuses a deployment stays in until someone acts: a wait for any status also ends on these. */
export const SETTLED: readonly DeploymentStatus[] = ['running', 'stopped', 'failed'];

type Get = (principal: Principal, id: string) => Promise<DeploymentRecord>;

/**
 * The record as every watcher of the deployment in this process reads it until the next wake (one read for a
 * hundred streams), or undefined once it is destroyed.
 */
export function sharedRecord(
  watch: Pick<StatusWatch, 'read'>,
  get: Get,
  principal: Principal,
  id: string,
): Promise<DeploymentRecord | undefined> {
  return watch.read(`record:${principal.org._id}`, () =>
    get(principal, id).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND') return undefined;
      throw err;
    }),
  );
}

/**
 * The long-poll behind `GET …/deployments/{id}?wait=<status>&timeout=<s>`: one request that answers when the
 * deployment reaches `until` or any settled status, or when the timeout passes (with the status as it is then).
 * A deployment destroyed meanwhile answers 404 like any read of it. While it waits it reads nothing: the worker's
 * status announcements (and the api's destroy) wake it.
 */
export function createDeploymentWaiter(deps: { feed: Pick<StatusFeed, 'watch'>; get: Get }) {
  return async function waitFor(
    principal: Principal,
    id: string,
    /** `signal`: the caller left; the answer no longer matters, so the wait ends with the record as it is. */
    opts: { until: DeploymentStatus; timeoutS: number; signal?: AbortSignal },
  ): Promise<DeploymentRecord> {
    const deadline = Date.now() + opts.timeoutS * 1000;
    const done = (r: DeploymentRecord) => r.status === opts.until || SETTLED.includes(r.status);
    // Checked first: an unknown or foreign ID is a 404 at once, before anything is subscribed.
    const first = await deps.get(principal, id);
    if (done(first)) return first;
    // Subscribed before the next read: whatever changes after it is announced to this watch.
    const watch = await deps.feed.watch(id, { on: ['status', 'destroyed'] });
    try {
      for (;;) {
        const record = await sharedRecord(watch, deps.get, principal, id);
        // Destroyed: the 404 of any read, in its own words.
        if (!record) return await deps.get(principal, id);
        if (done(record) || Date.now() >= deadline || opts.signal?.aborted) return record;
        await watch.changed(deadline - Date.now(), opts.signal);
      }
    } finally {
      watch.close();
    }
  };
}

export type DeploymentWaiter = ReturnType<typeof createDeploymentWaiter>;

/**
 * A status read as both origins serve it: at once, from the status read model, or with `?wait=` held until that
 * status or a settled one (then read from MongoDB, as the wait did); a client that leaves lets go of its wait.
 */
export async function readOrWait(
  deps: {
    waitFor: DeploymentWaiter;
    status: (principal: Principal, id: string) => Promise<StatusSnapshot>;
    releasesSummary: (d: DeploymentRecord) => Promise<StatusSnapshot['releases']>;
  },
  principal: Principal,
  id: string,
  query: { wait?: DeploymentStatus; timeout: number },
  res: { on(event: 'close', listener: () => void): unknown },
): Promise<StatusSnapshot> {
  if (!query.wait) return deps.status(principal, id);
  const left = new AbortController();
  res.on('close', () => left.abort());
  const record = await deps.waitFor(principal, id, { until: query.wait, timeoutS: query.timeout, signal: left.signal });
  return { record, releases: await deps.releasesSummary(record) };
}
