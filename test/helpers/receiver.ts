import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import express from 'express';

export interface Received {
  at: number;
  headers: Record<string, string>;
  raw: Buffer;
}

/** A webhook receiver on loopback that records every request and answers as `respond` says. */
export async function startReceiver(
  respond: (n: number) => { status: number; delayMs?: number } = () => ({ status: 200 }),
) {
  const received: Received[] = [];
  const app = express();
  app.post('/hook', express.raw({ type: '*/*' }), async (req, res) => {
    received.push({ at: Date.now(), headers: req.headers as Record<string, string>, raw: req.body as Buffer });
    const { status, delayMs } = respond(received.length);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    res.status(status).send(status >= 300 ? `nope ${status}` : 'ok');
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
