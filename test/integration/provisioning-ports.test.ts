import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { startStack } from '@scripts/stack';
import { edge } from '@scripts/stack/edge';
import { type Part, redis, temporal } from '@scripts/stack/parts';
import { ensurePortFree } from '@scripts/stack/ports';
import { freePort } from '@scripts/stack/process';
import { StackError } from '@scripts/stack/stack-error';

/**
 * Another program's server, recording every connection made to it: start-up must refuse its port without ever
 * talking to it (a readiness probe that did would take a stranger's server for ours).
 */
async function stranger(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const VARS = [
  'REDIS_URL',
  'TEMPORAL_ADDRESS',
  'SLIPWAY_REDIS_PORT',
  'SLIPWAY_TEMPORAL_UI_PORT',
  'SLIPWAY_TEMPORAL_PORT',
  'EDGE_ADMIN_URL',
  'EDGE_PORT',
  'SLIPWAY_EDGE_ADMIN_PORT',
];
const saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));
let dataDir: string;
let other: Awaited<ReturnType<typeof stranger>>;

beforeEach(async () => {
  // Global setup points these parts at its own servers; here they must be the embedded defaults.
  delete process.env.REDIS_URL;
  delete process.env.TEMPORAL_ADDRESS;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-ports-'));
  other = await stranger();
});

afterEach(async () => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  await other.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const ctx = (headless: boolean) => ({ dataDir, ports: 'default' as const, headless, progress: () => undefined });

describe('a default port held by another program', () => {
  it('stops Redis with one line naming the port, the part and the variable, without contacting the server', async () => {
    process.env.SLIPWAY_REDIS_PORT = String(other.port);

    const start = startStack({ dataDir, ports: 'default', parts: [redis] });

    await expect(start).rejects.toThrow(StackError);
    await expect(start).rejects.toThrow(
      `port ${other.port} (Redis) is taken by another program; set SLIPWAY_REDIS_PORT to a free port or stop that program`,
    );
    expect(other.connections()).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'redis'))).toBe(false);
  });

  it('stops the other parts at once instead of letting them build or wait on', async () => {
    process.env.SLIPWAY_REDIS_PORT = String(other.port);
    let stoppedEarly = false;
    // Stands for a part in the middle of a ten-minute tool build: it ends only when told to stop.
    const building: Part = {
      name: 'building',
      start: (ctx) =>
        new Promise((_resolve, reject) =>
          ctx.signal?.addEventListener('abort', () => {
            stoppedEarly = true;
            reject(new StackError('building stopped: start-up was interrupted'));
          }),
        ),
    };

    await expect(startStack({ dataDir, ports: 'default', parts: [building, redis] })).rejects.toThrow(
      `port ${other.port} (Redis) is taken by another program; set SLIPWAY_REDIS_PORT to a free port or stop that program`,
    );
    expect(stoppedEarly).toBe(true);
  });

  it("refuses the Temporal Web UI's port before building or starting anything", async () => {
    // Checked before the UI's port: a free one, so a local `npm start` on 7233 cannot decide this test.
    process.env.SLIPWAY_TEMPORAL_PORT = String(await freePort());
    process.env.SLIPWAY_TEMPORAL_UI_PORT = String(other.port);

    await expect(temporal.start(ctx(false))).rejects.toThrow(
      `port ${other.port} (the Temporal Web UI) is taken by another program; set SLIPWAY_TEMPORAL_UI_PORT to a free port or stop that program`,
    );
    expect(other.connections()).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'temporal'))).toBe(false);
  });

  it("refuses the edge router's port before building or starting Caddy, naming EDGE_PORT", async () => {
    delete process.env.EDGE_ADMIN_URL;
    process.env.SLIPWAY_EDGE_ADMIN_PORT = String(await freePort());
    process.env.EDGE_PORT = String(other.port);

    await expect(edge.start(ctx(true))).rejects.toThrow(
      `port ${other.port} (the edge router) is taken by another program; set EDGE_PORT to a free port or stop that program`,
    );
    expect(other.connections()).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'caddy'))).toBe(false);
  });

  it("refuses the api's port, naming PORT", async () => {
    await expect(ensurePortFree({ port: other.port, part: 'the api', variable: 'PORT' })).rejects.toThrow(
      `port ${other.port} (the api) is taken by another program; set PORT to a free port or stop that program`,
    );
    expect(other.connections()).toBe(0);
  });

  it('names the variable when its value is not a port', async () => {
    process.env.SLIPWAY_REDIS_PORT = 'six';

    await expect(redis.start(ctx(true))).rejects.toThrow(
      'invalid SLIPWAY_REDIS_PORT="six": a port number from 1 to 65535',
    );
  });
});
