import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import Redis from 'ioredis';
import { MongoClient } from 'mongodb';

import { SEARCH_ATTRIBUTES } from '@shared/constants';
import { ifAbsent } from '@shared/ignore';

import { ensureDebianPackages } from './debian';
import { docker } from './docker';
import { edge } from './edge';
import { EXTERNAL, type Part, type PartContext, type PartResult } from './part';
import { configuredPort, ensurePortsFree } from './ports';
import { ferretdbBackend, ferretdbStorage } from './postgres';
import { freePort, startServer } from './process';
import { ensureTool, type ToolName } from './tools';

export type { Part, PartContext, PartResult } from './part';

/**
 * The part's ports: the documented defaults (each movable by its variable), checked free before anything is
 * built or started, so a port held by another program stops start-up at once with one line; tests take free ones.
 */
async function ports<K extends string>(
  ctx: PartContext,
  wanted: Record<K, { port: number; part: string; variable: string }>,
): Promise<Record<K, number>> {
  const entries = Object.entries(wanted) as [K, { port: number; part: string; variable: string }][];
  if (ctx.ports === 'free') {
    return Object.fromEntries(await Promise.all(entries.map(async ([k]) => [k, await freePort()]))) as Record<
      K,
      number
    >;
  }
  const claims = entries.map(([k, c]) => ({ key: k, ...c, port: configuredPort(c.variable, c.port) }));
  await ensurePortsFree(claims);
  return Object.fromEntries(claims.map((c) => [c.key, c.port])) as Record<K, number>;
}

async function tool(name: ToolName, ctx: PartContext): Promise<string> {
  ctx.progress(`looking for ${name} in the tool cache`);
  return (await ensureTool(name, { signal: ctx.signal, progress: ctx.progress })).binary;
}

async function partDir(ctx: PartContext, name: string): Promise<string> {
  const dir = path.join(ctx.dataDir, name);
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

/** The dev server's spelling of each search attribute type (`--search-attribute Name=Type`). */
const DEV_SERVER_TYPES: Record<SearchAttributeType, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

export const temporal: Part = {
  name: 'temporal',
  async start(ctx): Promise<PartResult> {
    if (process.env.TEMPORAL_ADDRESS) return EXTERNAL;
    const { grpc, ui, http, metrics } = await ports(ctx, {
      grpc: { port: 7233, part: 'Temporal', variable: 'SLIPWAY_TEMPORAL_PORT' },
      // Headless runs bind no UI; the check must not refuse a port nothing will use.
      ...(ctx.headless
        ? {}
        : { ui: { port: 8233, part: 'the Temporal Web UI', variable: 'SLIPWAY_TEMPORAL_UI_PORT' } }),
      http: { port: 7243, part: "Temporal's HTTP API", variable: 'SLIPWAY_TEMPORAL_HTTP_PORT' },
      metrics: { port: 7244, part: "Temporal's metrics", variable: 'SLIPWAY_TEMPORAL_METRICS_PORT' },
    } as Record<'grpc' | 'ui' | 'http' | 'metrics', { port: number; part: string; variable: string }>);
    const binary = await tool('temporal', ctx);
    const dir = await partDir(ctx, 'temporal');
    const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', `${grpc}`, '--http-port', `${http}`];
    args.push('--metrics-port', `${metrics}`, '--db-filename', path.join(dir, 'temporal.db'), '--log-level', 'warn');
    // SQLite's default rollback journal syncs the disk three or four times per commit, and every workflow start,
    // task and activity is a commit: the dev server spent most of its time there (about 50 commits a second here),
    // which capped sales webhooks at a few deliveries a second. A write-ahead log syncs once per commit, as durable.
    args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=full');
    // The workflows' search attributes, so the Temporal UI can filter by deployment, status, name, project and org.
    for (const { name, type } of Object.values(SEARCH_ATTRIBUTES))
      args.push('--search-attribute', `${name}=${DEV_SERVER_TYPES[type]}`);
    args.push(...(ctx.headless ? ['--headless'] : ['--ui-ip', '127.0.0.1', '--ui-port', `${ui}`]));
    ctx.progress('starting the Temporal dev server');
    const address = `127.0.0.1:${grpc}`;
    const proc = await startServer(
      'the Temporal dev server',
      ['temporal', binary, args, { logFile: path.join(dir, 'temporal.log') }],
      async () => {
        const connection = await Connection.connect({ address, connectTimeout: 1000 });
        try {
          await connection.workflowService.describeNamespace({ namespace: 'default' });
          return true;
        } finally {
          await connection.close();
        }
      },
      undefined,
      ctx.signal,
    );
    const urls: Record<string, string> = ctx.headless ? {} : { 'Temporal UI': `http://127.0.0.1:${ui}` };
    return {
      env: {
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: 'default',
        ...(urls['Temporal UI'] ? { TEMPORAL_UI_URL: urls['Temporal UI'] } : {}),
      },
      urls,
      started: [proc],
      external: false,
    };
  },
};

export const mongodb: Part = {
  name: 'ferretdb',
  async start(ctx): Promise<PartResult> {
    if (process.env.MONGODB_URL) return EXTERNAL;
    const postgresql = ferretdbBackend() === 'postgresql';
    const { listen, debug, pg } = await ports(ctx, {
      listen: { port: 27017, part: 'FerretDB', variable: 'SLIPWAY_FERRETDB_PORT' },
      debug: { port: 27018, part: "FerretDB's debug handler", variable: 'SLIPWAY_FERRETDB_DEBUG_PORT' },
      // Next to FerretDB's own, away from 5432, where a host's own PostgreSQL usually listens.
      ...(postgresql
        ? { pg: { port: 27019, part: "FerretDB's PostgreSQL", variable: 'SLIPWAY_POSTGRESQL_PORT' } }
        : {}),
    } as Record<'listen' | 'debug' | 'pg', { port: number; part: string; variable: string }>);
    const [binary, dir] = await Promise.all([tool('ferretdb', ctx), partDir(ctx, 'ferretdb')]);
    const storage = await ferretdbStorage(ctx, dir, postgresql ? pg : undefined);
    const args = [...storage.args, `--listen-addr=127.0.0.1:${listen}`, `--debug-addr=127.0.0.1:${debug}`];
    args.push(`--state-dir=${dir}`, '--telemetry=disable', '--log-level=warn');
    ctx.progress(`starting FerretDB (${storage.label} backend)`);
    const url = `mongodb://127.0.0.1:${listen}/slipway`;
    const proc = await startServer(
      'FerretDB',
      ['ferretdb', binary, args, { logFile: path.join(dir, 'ferretdb.log') }],
      async () => {
        const client = await MongoClient.connect(url, { serverSelectionTimeoutMS: 1000 });
        try {
          await client.db('admin').command({ ping: 1 });
          return true;
        } finally {
          await client.close();
        }
      },
      undefined,
      ctx.signal,
    ).catch(async (err: unknown) => {
      await Promise.all(storage.started.map((p) => p.stop()));
      throw err;
    });
    return { env: { MONGODB_URL: url }, started: [...storage.started, proc], external: false };
  },
};

/** The embedded MinIO's root user; its password is generated per data directory (minioRootPassword). */
const MINIO_USER = 'slipway';
/**
 * The password data directories made before it was generated: MinIO encrypts its IAM data (the buckets' keys) with
 * the root credentials, so a directory that has them keeps the password it was made with.
 */
const LEGACY_MINIO_PASSWORD = 'slipway-local-only';
const BUCKET = 'slipway';

/**
 * The root password of the MinIO in `dataDir`, kept beside it (mode 0600). Tenant containers reach MinIO's S3 port
 * through the worker's firewall (docs/architecture.md, "Buckets"), so its root password may not be a string anyone can
 * read in this repository: a new directory gets 32 random bytes. One that MinIO already initialised with the old fixed
 * password keeps it (its IAM data is encrypted with it); delete .data/minio to get a generated one.
 */
async function minioRootPassword(dataDir: string, minioDir: string): Promise<string> {
  const file = path.join(dataDir, 'minio-root-password');
  const kept = (await fs.readFile(file, 'utf8').catch(ifAbsent(''))).trim();
  if (kept) return kept;
  const initialised = await fs.access(path.join(minioDir, '.minio.sys')).then(() => true, ifAbsent(false));
  const password = initialised ? LEGACY_MINIO_PASSWORD : randomBytes(32).toString('hex');
  await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

export const s3: Part = {
  name: 'minio',
  async start(ctx): Promise<PartResult> {
    if (process.env.S3_ENDPOINT) return EXTERNAL;
    const { api, consolePort } = await ports(ctx, {
      api: { port: 9000, part: 'MinIO', variable: 'SLIPWAY_MINIO_PORT' },
      consolePort: { port: 9001, part: "MinIO's console", variable: 'SLIPWAY_MINIO_CONSOLE_PORT' },
    });
    // mc makes the keys that open one bucket only (shared/buckets/scoped-keys.ts); built beside the server.
    const [binary, mc] = await Promise.all([tool('minio', ctx), tool('mc', ctx)]);
    const dir = await partDir(ctx, 'minio');
    const MINIO_PASSWORD = await minioRootPassword(ctx.dataDir, dir);
    ctx.progress('starting MinIO');
    const endpoint = `http://127.0.0.1:${api}`;
    const env = {
      ...process.env,
      MINIO_ROOT_USER: MINIO_USER,
      MINIO_ROOT_PASSWORD: MINIO_PASSWORD,
      MINIO_BROWSER: 'off',
    };
    const args = [
      'server',
      dir,
      '--address',
      `127.0.0.1:${api}`,
      '--console-address',
      `127.0.0.1:${consolePort}`,
      '--quiet',
    ];
    const proc = await startServer(
      'MinIO',
      ['minio', binary, args, { logFile: path.join(ctx.dataDir, 'minio.log'), env: { ...env, MINIO_UPDATE: 'off' } }],
      async () => (await fetch(`${endpoint}/minio/health/ready`)).ok,
      async () => {
        const client = new S3Client({
          endpoint,
          region: 'us-east-1',
          forcePathStyle: true,
          credentials: { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD },
        });
        const exists = await client.send(new HeadBucketCommand({ Bucket: BUCKET })).then(
          () => true,
          (err: { $metadata?: { httpStatusCode?: number } }) => {
            if (err.$metadata?.httpStatusCode === 404) return false;
            throw err;
          },
        );
        if (!exists) await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
        client.destroy();
      },
      ctx.signal,
    );
    return {
      env: {
        S3_ENDPOINT: endpoint,
        S3_BUCKET: BUCKET,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: MINIO_USER,
        S3_SECRET_ACCESS_KEY: MINIO_PASSWORD,
        S3_FORCE_PATH_STYLE: 'true',
        S3_ADMIN: 'minio',
        MC_BINARY: mc,
      },
      started: [proc],
      external: false,
    };
  },
};

/**
 * Redis holds what must be atomic across api processes (rate limits, quotas): FerretDB's updates are not
 * (docs/architecture.md, "Decisions, and why"). Debian's redis-server, bound to loopback, with its snapshot under the
 * data directory.
 */
export const redis: Part = {
  name: 'redis',
  async start(ctx): Promise<PartResult> {
    if (process.env.REDIS_URL) return EXTERNAL;
    const { listen } = await ports(ctx, { listen: { port: 6379, part: 'Redis', variable: 'SLIPWAY_REDIS_PORT' } });
    if ((await ensureDebianPackages(['redis-server'], 'rate limits and quotas (Redis)', ctx.progress)).length > 0) {
      ctx.progress("installed Debian's redis-server");
    }
    const dir = await partDir(ctx, 'redis');
    const args = ['--bind', '127.0.0.1', '--port', `${listen}`, '--dir', dir, '--dbfilename', 'dump.rdb'];
    // No config file of the host's: protected mode on loopback, snapshots every minute when anything changed.
    args.push('--save', '60 1', '--appendonly', 'no', '--protected-mode', 'yes', '--daemonize', 'no');
    ctx.progress('starting Redis');
    const url = `redis://127.0.0.1:${listen}`;
    const proc = await startServer(
      'Redis',
      ['redis', 'redis-server', args, { logFile: path.join(dir, 'redis.log') }],
      async () => {
        const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        client.on('error', () => undefined); // a refused probe is the answer "not yet", not an event to report
        try {
          await client.connect();
          return (await client.ping()) === 'PONG';
        } finally {
          client.disconnect();
        }
      },
      undefined,
      ctx.signal,
    );
    return { env: { REDIS_URL: url }, started: [proc], external: false };
  },
};

export const ALL_PARTS: Part[] = [temporal, mongodb, s3, docker, redis, edge];
