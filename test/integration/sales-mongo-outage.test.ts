import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { mongodb, type PartResult } from '@scripts/stack/parts';
import { freePort } from '@scripts/stack/process';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';

type Data<T> = { status: string; data: T };

/**
 * Before: a delivery's activity gave up after 5 tries within about 40 s of MongoDB being away (5 s server
 * selection per try, back-off 1+2+4+8 s), so an outage of a minute lost the event. The outage here lasts longer.
 */
const OUTAGE_MS = 75_000;

/**
 * A MongoDB outage in the middle of a delivery, on a FerretDB of this test's own (the suite's is shared by every
 * file): stopped right after the receiver got the event and before the attempt is recorded, started again later
 * on the same data and port.
 */
describe('a webhook delivery outlives a MongoDB outage', () => {
  let dataDir: string;
  let ferret: PartResult | undefined;
  let h: Harness | undefined;
  const ports = { listen: 0, debug: 0 };

  /** The stack's own FerretDB part on fixed ports and this test's data directory. */
  async function startFerret(): Promise<PartResult> {
    const saved = { ...process.env };
    // The suite's MONGODB_URL would make the part "external"; the ports are pinned so a restart keeps the URL.
    delete process.env.MONGODB_URL;
    process.env.SLIPWAY_FERRETDB_PORT = String(ports.listen);
    process.env.SLIPWAY_FERRETDB_DEBUG_PORT = String(ports.debug);
    try {
      return await mongodb.start({ dataDir, ports: 'default', headless: true, progress: () => undefined });
    } finally {
      for (const k of ['MONGODB_URL', 'SLIPWAY_FERRETDB_PORT', 'SLIPWAY_FERRETDB_DEBUG_PORT']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  }
  const stopFerret = async () => {
    for (const p of ferret?.started ?? []) await p.stop();
    ferret = undefined;
  };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-outage-'));
    ports.listen = await freePort();
    ports.debug = await freePort();
    ferret = await startFerret();
    h = await startHarness('mongo-outage', {
      MONGODB_URL: ferret.env.MONGODB_URL!,
      MONGODB_DB: 'slipway_outage',
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
    });
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await stopFerret();
    await fs.rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it(
    'records the attempt once MongoDB is back, having sent the event exactly once',
    async () => {
      let received = 0;
      // Takes the database away after the event arrived and before answering: the next step, recording the
      // attempt, meets the outage.
      const receiver = http.createServer((req, res) => {
        received++;
        req.resume();
        void stopFerret().then(() => res.end('ok'));
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const api = client(h!, (await h!.newOrg()).token);
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        expect((await api.call('PUT', '/platform/sales/webhook', { url })).status).toBe(200);
        const product = await api.post<Data<{ id: string }>>('/platform/products', {
          name: 'Course',
          billingType: 'ONE_TIME',
          price: 5,
          currency: 'USD',
        });
        const sale = await api.post<Data<{ eventId: string }>>('/platform/sales', {
          productId: product.body.data.id,
          buyer: { email: 'outage@example.com', name: 'Buyer' },
          amount: 5,
          currency: 'USD',
        });
        expect(sale.status).toBe(200);
        const workflow = h!.temporal.workflow.getHandle(`webhook/${sale.body.data.eventId}`);

        await eventually(async () => (ferret === undefined && received === 1 ? true : undefined), 'the outage');
        await new Promise((r) => setTimeout(r, OUTAGE_MS));
        // Still trying, where the old retry budget had failed the workflow by now.
        expect((await workflow.describe()).status.name).toBe('RUNNING');

        ferret = await startFerret();
        expect(await workflow.result()).toBe('delivered');
        const delivery = await api.get<Data<{ status: string; attempts: { responseStatus: number }[] }>>(
          `/platform/sales/deliveries/${sale.body.data.eventId}`,
        );
        expect(delivery.body.data).toMatchObject({ status: 'delivered', attempts: [{ responseStatus: 200 }] });
        expect(received).toBe(1);
      } finally {
        receiver.closeAllConnections();
        await new Promise((r) => receiver.close(r));
      }
    },
    OUTAGE_MS + 180_000,
  );
});
