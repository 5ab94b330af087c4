import { Client, Connection } from '@temporalio/client';

import { checkReadiness } from '@api/http/readiness';
import { connectMongo } from '@shared/db/mongo';
import { createRedis } from '@shared/redis';

import { startHarness } from '../helpers/harness';

describe('/healthz and /readyz (real FerretDB, Redis and Temporal)', () => {
  it('answers 200 when MongoDB, Redis, Temporal and a polling worker are there', async () => {
    const h = await startHarness('readyz');
    try {
      expect((await fetch(`${h.baseUrl}/healthz`)).status).toBe(200);
      const ready = await fetch(`${h.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    } finally {
      await h.stop();
    }
  });

  it('names the worker when no worker polls the task queue', async () => {
    const database = await connectMongo(process.env.MONGODB_URL!, 'slipway_test');
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    const redis = createRedis(process.env.REDIS_URL!);
    try {
      const problems = await checkReadiness({
        db: database.db,
        redis,
        temporal: new Client({ connection }),
        namespace: 'default',
        taskQueue: `nobody-polls-${Date.now()}`,
      });
      expect(Object.keys(problems)).toEqual(['worker']);
      expect(problems.worker).toMatch(/no worker is polling task queue nobody-polls-/);
    } finally {
      await connection.close();
      await database.close();
      await redis.quit();
    }
  });

  it('names MongoDB, Redis and Temporal when their connections are gone', async () => {
    // Closed clients stand in for servers that went away: the check must name each part, not hang.
    const database = await connectMongo(process.env.MONGODB_URL!, 'slipway_test');
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    const redis = createRedis(process.env.REDIS_URL!);
    await database.close();
    await connection.close();
    await redis.quit();
    const problems = await checkReadiness({
      db: database.db,
      redis,
      temporal: new Client({ connection }),
      namespace: 'default',
      taskQueue: 'any',
    });
    expect(Object.keys(problems).sort()).toEqual(['mongodb', 'redis', 'temporal']);
  });

  it('names Redis alone when nothing answers at its address', async () => {
    // A port nobody listens on: the client keeps retrying, so the check must give up on its own and say so.
    const silent = createRedis('redis://127.0.0.1:1');
    const h = await startHarness('readyz-redis');
    try {
      const problems = await checkReadiness({
        db: h.db,
        redis: silent,
        temporal: h.temporal,
        namespace: h.config.TEMPORAL_NAMESPACE,
        taskQueue: h.taskQueue,
      });
      expect(Object.keys(problems)).toEqual(['redis']);
    } finally {
      silent.disconnect();
      await h.stop();
    }
  });
});
