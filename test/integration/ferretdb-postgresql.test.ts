import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { MongoClient } from 'mongodb';

import { type Stack, startStack } from '@scripts/stack';
import { mongodb } from '@scripts/stack/parts';

const run = promisify(execFile);
const quiet: Parameters<typeof startStack>[0]['run'] = (jobs) =>
  Promise.allSettled(jobs.map((j) => j.start(() => undefined)));

const saved = { MONGODB_URL: process.env.MONGODB_URL, FERRETDB_BACKEND: process.env.FERRETDB_BACKEND };
let dataDir: string;
let stack: Stack | undefined;

beforeEach(() => {
  // The suite's MONGODB_URL would make the part "external": this test starts a FerretDB of its own.
  delete process.env.MONGODB_URL;
  process.env.FERRETDB_BACKEND = 'postgresql';
  // mkdtemp makes it 0700, as the suite's own data directory is: the server's account must still reach its cluster.
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-ferretdb-pg-'));
});

afterEach(async () => {
  await stack?.stop();
  stack = undefined;
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const alive = (pid: number) =>
  fs.existsSync(`/proc/${pid}`) && !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));

async function withClient<T>(url: string, fn: (client: MongoClient) => Promise<T>): Promise<T> {
  const client = await MongoClient.connect(url);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

describe('FerretDB on PostgreSQL (FERRETDB_BACKEND=postgresql)', () => {
  it("keeps the records in the stack's own PostgreSQL under the data directory, across a restart", async () => {
    stack = await startStack({ dataDir, ports: 'free', headless: true, parts: [mongodb], run: quiet });
    const postgres = stack.started.find((p) => p.name === 'postgres');
    expect(postgres).toBeDefined();
    const cluster = path.join(dataDir, 'ferretdb', 'postgresql');
    expect(fs.existsSync(path.join(cluster, 'PG_VERSION'))).toBe(true);

    await withClient(stack.env.MONGODB_URL!, (c) =>
      c
        .db('slipway')
        .collection('probe')
        .insertOne({ _id: 'kept' as never, n: 1 }),
    );
    // The record went to PostgreSQL: FerretDB made a schema for the database there, and no SQLite file.
    const port = /-p (\d+)/.exec(fs.readFileSync(`/proc/${postgres!.pid}/cmdline`, 'utf8').replaceAll('\0', ' '))![1]!;
    const schemas = await run('psql', [
      '-h',
      '127.0.0.1',
      '-p',
      port,
      '-U',
      'ferretdb',
      '-d',
      'ferretdb',
      '-tAc',
      'SELECT nspname FROM pg_namespace',
    ]);
    expect(schemas.stdout.split('\n')).toContain('slipway');
    expect(fs.readdirSync(path.join(dataDir, 'ferretdb')).filter((f) => f.endsWith('.sqlite'))).toEqual([]);

    await stack.stop();
    expect(alive(postgres!.pid)).toBe(false);

    stack = await startStack({ dataDir, ports: 'free', headless: true, parts: [mongodb], run: quiet });
    const found = await withClient(stack.env.MONGODB_URL!, (c) =>
      c
        .db('slipway')
        .collection('probe')
        .findOne({ _id: 'kept' as never }),
    );
    expect(found).toMatchObject({ n: 1 });
  });
});
