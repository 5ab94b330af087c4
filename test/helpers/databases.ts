import { execRun } from '@activities/providers/engine-exec';
import type { DatabaseEngine } from '@shared/databases/engines';

import type { client } from './client';
import { eventually, type Harness } from './harness';

type Api = ReturnType<typeof client>;

export interface DatabaseBody {
  data: {
    id: string;
    kind: string;
    engine: DatabaseEngine;
    name: string;
    status: string;
    error: string | null;
    host: string;
    deploymentId: string | null;
    projectId: string | null;
  };
}
export interface BackupBody {
  data: {
    id: string;
    status: string;
    trigger: string;
    sizeBytes: number | null;
    sha256: string | null;
    error: string | null;
  };
}
export interface Credentials {
  user: string;
  password: string;
  database: string;
  url: string;
}

/** Waits until the database reads `status` (ready by default) and returns it; fails early on failed. */
export async function databaseReads(api: Api, path: string, status = 'ready', timeoutMs = 180_000) {
  return eventually(
    async () => {
      const r = await api.get<DatabaseBody>(path);
      if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
      if (r.body.data.status === 'failed' && status !== 'failed')
        throw new Error(`database ${path} failed: ${r.body.data.error}`);
      return r.body.data.status === status ? r.body.data : undefined;
    },
    `${path} ${status}`,
    timeoutMs,
  );
}

export async function backupReads(api: Api, path: string, status = 'complete', timeoutMs = 180_000) {
  return eventually(
    async () => {
      const r = await api.get<BackupBody>(path);
      if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}`);
      if (r.body.data.status === 'failed' && status !== 'failed')
        throw new Error(`backup ${path} failed: ${r.body.data.error}`);
      return r.body.data.status === status ? r.body.data : undefined;
    },
    `${path} ${status}`,
    timeoutMs,
  );
}

/**
 * Writes and reads each engine's data through its own client, run in the database's container over TCP with the
 * credentials the api reveals (as an app would connect): PostgreSQL and MariaDB rows of one table, Redis keys.
 */
export const ENGINE_DATA: Record<
  DatabaseEngine,
  {
    write(h: Harness, dbId: string, c: Credentials, values: string[]): Promise<void>;
    read(h: Harness, dbId: string, c: Credentials): Promise<string[]>;
  }
> = {
  postgresql: {
    write: async (h, id, c, values) => {
      await sql(
        h,
        id,
        c,
        `CREATE TABLE IF NOT EXISTS t (v text); INSERT INTO t VALUES ${values.map((v) => `('${v}')`).join(',')}`,
      );
    },
    read: async (h, id, c) => lines(await sql(h, id, c, 'SELECT v FROM t ORDER BY v')),
  },
  mariadb: {
    write: async (h, id, c, values) => {
      await sql(
        h,
        id,
        c,
        `CREATE TABLE IF NOT EXISTS t (v varchar(64)); INSERT INTO t VALUES ${values.map((v) => `('${v}')`).join(',')}`,
        'mariadb',
      );
    },
    read: async (h, id, c) => lines(await sql(h, id, c, 'SELECT v FROM t ORDER BY v', 'mariadb')),
  },
  redis: {
    write: async (h, id, c, values) => {
      for (const v of values) await redisCli(h, id, c, ['SET', `k:${v}`, v]);
    },
    read: async (h, id, c) =>
      lines(await redisCli(h, id, c, ['KEYS', 'k:*']))
        .map((k) => k.slice(2))
        .sort(),
  },
};

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const container = (id: string) => `slipway-db-${id}`;

async function sql(
  h: Harness,
  id: string,
  c: Credentials,
  text: string,
  engine: 'postgresql' | 'mariadb' = 'postgresql',
) {
  const cmd =
    engine === 'postgresql'
      ? [
          'psql',
          '-X',
          '-q',
          '-At',
          '-v',
          'ON_ERROR_STOP=1',
          '-h',
          '127.0.0.1',
          '-U',
          c.user,
          '-d',
          c.database,
          '-c',
          text,
        ]
      : ['mariadb', '-h', '127.0.0.1', '-u', c.user, '-N', '-B', c.database, '-e', text];
  const env: Record<string, string> = engine === 'postgresql' ? { PGPASSWORD: c.password } : { MYSQL_PWD: c.password };
  return (await execRun(h.docker, container(id), { cmd, env })).stdout;
}

async function redisCli(h: Harness, id: string, c: Credentials, args: string[]) {
  return (
    await execRun(h.docker, container(id), {
      cmd: ['redis-cli', '-h', '127.0.0.1', '--no-auth-warning', ...args],
      env: { REDISCLI_AUTH: c.password },
    })
  ).stdout;
}

/** The PostgreSQL helper for a test that needs its own statements. */
export const psql = (h: Harness, id: string, c: Credentials, text: string) => sql(h, id, c, text);

const hex8 = (random: string) => Array(8).fill(random).join(', ');

/**
 * Fills a database with about 100 MB that does not compress much (so its dump takes seconds and crosses several
 * upload parts), and counts what it holds: the rows of table `big`, or the keys `big:*`.
 */
export const BULK: Record<
  DatabaseEngine,
  {
    fill(h: Harness, id: string, c: Credentials): Promise<void>;
    count(h: Harness, id: string, c: Credentials): Promise<string>;
  }
> = {
  postgresql: {
    fill: async (h, id, c) => {
      await sql(
        h,
        id,
        c,
        `CREATE TABLE big AS SELECT g AS id, concat(${hex8('md5(random()::text)')}) AS v FROM generate_series(1, 400000) g`,
      );
    },
    count: async (h, id, c) => (await sql(h, id, c, 'SELECT count(*) FROM big')).trim(),
  },
  mariadb: {
    fill: async (h, id, c) => {
      await sql(
        h,
        id,
        c,
        `CREATE TABLE big AS SELECT seq AS id, CONCAT(${hex8('MD5(RAND())')}) AS v FROM seq_1_to_400000`,
        'mariadb',
      );
    },
    count: async (h, id, c) => (await sql(h, id, c, 'SELECT COUNT(*) FROM big', 'mariadb')).trim(),
  },
  redis: {
    fill: async (h, id, c) => {
      // 64 random blocks of 400 characters, one per key with its number: each value as random as the block.
      const script = `
        local blocks = {}
        for b = 1, 64 do
          local t = {}
          for i = 1, 400 do t[i] = string.char(33 + math.random(0, 90)) end
          blocks[b] = table.concat(t)
        end
        for i = 1, 200000 do redis.call('SET', 'big:' .. i, blocks[(i % 64) + 1] .. i) end
        return 1`;
      await redisCli(h, id, c, ['EVAL', script, '0']);
    },
    count: async (h, id, c) => (await redisCli(h, id, c, ['EVAL', "return #redis.call('KEYS', 'big:*')", '0'])).trim(),
  },
};
