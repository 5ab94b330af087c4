import { proxyActivities } from '@temporalio/workflow';

import type { DatabaseActivities } from '@activities/database';

/** Record writes are quick; a database outage is waited out rather than leaving a record behind what it describes. */
export const records = proxyActivities<DatabaseActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds' },
});

/**
 * The server and its storage: seconds, or a minute for a server's first start. They heartbeat every 5 s, so a worker
 * killed mid-step is noticed within 30 s and the step runs again elsewhere, finding what the first attempt made.
 */
export const server = proxyActivities<DatabaseActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Dumps, verifications and loads: as long as the data is big (a 1 GB database takes about a minute each way here),
 * heartbeating throughout. A dump cut short by a dead worker starts again from the beginning; a few attempts, then
 * the backup or restore fails and says why.
 */
export const transfers = proxyActivities<DatabaseActivities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});
