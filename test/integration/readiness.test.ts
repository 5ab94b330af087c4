import { Client, Connection } from '@temporalio/client';

import { checkReadiness } from '../../api/readiness';
import { connectMongo } from '../../shared/db/mongo';
import { startHarness } from '../helpers/harness';

describe('/healthz and /readyz (real FerretDB and Temporal)', () => {
  it('answers 200 when MongoDB, Temporal and a polling worker are there', async () => {
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
    try {
      const problems = await checkReadiness({
        db: database.db,
        temporal: new Client({ connection }),
        namespace: 'default',
        taskQueue: `nobody-polls-${Date.now()}`,
      });
      expect(Object.keys(problems)).toEqual(['worker']);
      expect(problems.worker).toMatch(/no worker is polling task queue nobody-polls-/);
    } finally {
      await connection.close();
      await database.close();
    }
  });

  it('names MongoDB and Temporal when their connections are gone', async () => {
    // Closed clients stand in for servers that went away: the check must name each part, not hang.
    const database = await connectMongo(process.env.MONGODB_URL!, 'slipway_test');
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    await database.close();
    await connection.close();
    const problems = await checkReadiness({
      db: database.db,
      temporal: new Client({ connection }),
      namespace: 'default',
      taskQueue: 'any',
    });
    expect(Object.keys(problems).sort()).toEqual(['mongodb', 'temporal']);
  });
});
