// Sales webhook benchmarks: time from POST /platform/sales to the first delivery
// arriving at a local receiver, and deliveries per second sustained for one minute, then what the deliveries log
// says of them. Prints, never asserts.
// Run: node --import tsx bench/webhooks.ts   (BENCH_SALES_IN_FLIGHT=32 keeps more sales in flight than the 8 default)
import type { AddressInfo } from 'node:net';

import express from 'express';

import { median, percentile, startService } from './harness';

const SAMPLES = 20;
const SUSTAIN_S = 60;
const CONCURRENCY = Number(process.env.BENCH_SALES_IN_FLIGHT ?? 8);
const DRAIN_CAP_MS = 10 * 60_000;

async function main() {
  const arrivals = new Map<string, number>();
  const receiver = express();
  receiver.post('/hook', express.raw({ type: '*/*' }), (req, res) => {
    arrivals.set(req.get('x-sales-event-id')!, performance.now());
    res.status(204).end();
  });
  const server = receiver.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  const svc = await startService({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
  const call = async <T>(method: string, path: string, body?: unknown) => {
    const r = await fetch(`${svc.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${svc.org.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path} answered ${r.status}: ${text}`);
    return (JSON.parse(text) as { data: T }).data;
  };
  try {
    await call('PUT', '/platform/sales/webhook', { url: hookUrl });
    const { id: productId } = await call<{ id: string }>('POST', '/platform/products', {
      name: 'Bench',
      billingType: 'ONE_TIME',
      price: 1,
      currency: 'USD',
    });
    const sell = async (i: number) => {
      const t0 = performance.now();
      const { eventId } = await call<{ eventId: string }>('POST', '/platform/sales', {
        productId,
        buyer: { email: `b${i}@bench.test`, name: 'B' },
        amount: 1,
        currency: 'USD',
      });
      return { eventId, t0 };
    };

    const firstAttempt: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const { eventId, t0 } = await sell(i);
      while (!arrivals.has(eventId)) await new Promise((r) => setTimeout(r, 5));
      firstAttempt.push(arrivals.get(eventId)! - t0);
    }

    // Sustained: keep CONCURRENCY sales in flight for SUSTAIN_S seconds; count deliveries arriving in the window.
    const before = arrivals.size;
    const start = performance.now();
    const deadline = start + SUSTAIN_S * 1000;
    let sold = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < deadline) await sell(SAMPLES + sold++);
      }),
    );
    const windowEnd = performance.now();
    const delivered = [...arrivals.values()].filter((t) => t >= start && t <= windowEnd).length;
    // Let the backlog drain so the figure for the window is not confused with the tail. Sales outpace deliveries
    // here, so the backlog can take minutes; a cap keeps the bench bounded, and what it leaves is said, not hidden.
    const drainStart = performance.now();
    while (arrivals.size < before + sold && performance.now() - drainStart < DRAIN_CAP_MS)
      await new Promise((r) => setTimeout(r, 50));

    const drainedAt = performance.now();
    const pending = before + sold - arrivals.size;
    // The log a seller reads must say the same: every sale's event delivered, none still pending or failed. An
    // attempt is recorded just after the receiver answered, so the last few may need a moment to show.
    const logged = async (status: string) =>
      (await call<{ total: number }>('GET', `/platform/sales/deliveries?status=${status}&limit=1`)).total;
    const readLog = async () => ({
      delivered: await logged('delivered'),
      pending: await logged('pending'),
      failed: await logged('failed'),
    });
    let log = await readLog();
    for (let i = 0; i < 60 && log.delivered + log.failed < SAMPLES + sold; i++) {
      await new Promise((r) => setTimeout(r, 500));
      log = await readLog();
    }
    console.log(`\nSlipway webhook benchmark (${new Date().toISOString()}, node ${process.version})`);
    console.log(
      `POST /platform/sales → first attempt arrives (n=${SAMPLES})  median ${median(firstAttempt).toFixed(0)} ms  p90 ${percentile(firstAttempt, 90).toFixed(0)} ms`,
    );
    console.log(
      `sustained ${SUSTAIN_S} s, ${CONCURRENCY} sales in flight            ${(delivered / ((windowEnd - start) / 1000)).toFixed(1)} deliveries/s arrived (${sold} sales recorded, ${arrivals.size - before} delivered after drain${pending ? `, ${pending} still pending when the bench stopped waiting` : ''})`,
    );
    console.log(
      `all ${arrivals.size - before} deliveries of the window, sale to arrival     ${((arrivals.size - before) / ((drainedAt - start) / 1000)).toFixed(1)} deliveries/s over ${((drainedAt - start) / 1000).toFixed(0)} s`,
    );
    console.log(
      `deliveries log after the drain (${SAMPLES + sold} sales)             ${log.delivered} delivered, ${log.pending} pending, ${log.failed} failed`,
    );
  } finally {
    await svc.stop();
    server.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
