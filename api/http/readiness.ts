import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import type { Db } from 'mongodb';

import type { Redis } from '@shared/redis';

/** A worker counts as polling when the server saw it within this window. */
const POLLER_FRESH_MS = 2 * 60_000;

export interface ReadinessDeps {
  db: Db;
  /** Rate limits and quotas: without it no limited request can be answered. */
  redis: Pick<Redis, 'ping'>;
  temporal: Client;
  namespace: string;
  taskQueue: string;
}

/** Checks each part /readyz depends on; returns the names of the parts that are not ready, with why. */
export async function checkReadiness({
  db,
  redis,
  temporal,
  namespace,
  taskQueue,
}: ReadinessDeps): Promise<Record<string, string>> {
  const problems: Record<string, string> = {};
  const timers: NodeJS.Timeout[] = [];
  const timeout = <T>(p: Promise<T>) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) => timers.push(setTimeout(() => reject(new Error('timed out after 3 s')), 3000))),
    ]);
  await Promise.all([
    timeout(db.command({ ping: 1 })).catch((err: Error) => (problems.mongodb = err.message)),
    timeout(redis.ping()).catch((err: Error) => (problems.redis = err.message)),
    timeout(
      temporal.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      }),
    ).then(
      ({ pollers }) => {
        const fresh = pollers.some((p) => {
          const seconds = Number(p.lastAccessTime?.seconds ?? 0);
          return Date.now() - seconds * 1000 < POLLER_FRESH_MS;
        });
        if (!fresh) problems.worker = `no worker is polling task queue ${taskQueue}`;
      },
      (err: Error) => (problems.temporal = err.message),
    ),
  ]);
  for (const t of timers) clearTimeout(t);
  return problems;
}
