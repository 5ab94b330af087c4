import type { DatabaseCredentials, DatabaseEngine } from '@shared/databases/engines';

import type { ExecCommand } from './engine-exec';

/**
 * The command lines each engine's image runs for Slipway: is it ready, dump it, load a dump. Every one is an argv
 * array run by exec, with the password in the environment variable the engine's own clients read (PGPASSWORD,
 * MYSQL_PWD, REDISCLI_AUTH). The images are scripts/images/{postgres,mariadb,redis}.
 */

/** Where a Slipway volume is mounted in every database container; the servers keep their state below it. */
export const DATA_DIR = '/var/lib/slipway-data';
/** A restore's upload before it is loaded: on the volume itself, so a dump larger than the volume fails there. */
export const RESTORE_FILE = `${DATA_DIR}/.slipway-restore`;
/** Redis's snapshot, which a restore replaces (its entrypoint sets `dir` and `dbfilename`). */
export const REDIS_DUMP = `${DATA_DIR}/redis/dump.rdb`;
/** Where a MariaDB dump is loaded first, to find a broken one before the app's database is touched. */
export const MARIADB_CHECK_DB = 'slipway_restore_check';

/** Plain identifiers and URL-safe passwords only: what generateCredentials makes and the images accept. */
const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const PASSWORD = /^[A-Za-z0-9._~-]{16,256}$/;

export function checkCredentials(engine: DatabaseEngine, c: DatabaseCredentials): void {
  if (typeof c?.password !== 'string' || !PASSWORD.test(c.password))
    throw new TypeError('a database password must be 16 to 256 of [A-Za-z0-9._~-]');
  if (engine === 'redis') {
    if (c.user !== 'default' || !/^(?:[0-9]|1[0-5])$/.test(c.database))
      throw new TypeError("a Redis database has the user 'default' and a database number from 0 to 15");
    return;
  }
  for (const [what, v] of [
    ['user', c.user],
    ['database name', c.database],
  ] as const)
    if (typeof v !== 'string' || !IDENT.test(v))
      throw new TypeError(`a database ${what} must be a letter or underscore, then letters, digits or underscores`);
}

/** The variables the image's entrypoint reads on its first start. */
export const serverEnv = (c: DatabaseCredentials) => ({
  DB_USER: c.user,
  DB_PASSWORD: c.password,
  DB_NAME: c.database,
});

const LOCAL = ['-h', '127.0.0.1'];

/** Answers only once the server takes the app's own credentials over TCP (not the set-up server of a first start). */
export function readyCommand(engine: DatabaseEngine, c: DatabaseCredentials): ExecCommand & { expect: string } {
  switch (engine) {
    case 'postgresql':
      return {
        cmd: ['psql', '-XAtq', ...LOCAL, '-U', c.user, '-d', c.database, '-c', 'SELECT 1'],
        env: { PGPASSWORD: c.password },
        expect: '1',
      };
    case 'mariadb':
      return {
        cmd: ['mariadb', '--protocol=TCP', ...LOCAL, '-u', c.user, '-N', '-B', '-e', 'SELECT 1', c.database],
        env: { MYSQL_PWD: c.password },
        expect: '1',
      };
    case 'redis':
      return {
        cmd: ['redis-cli', ...LOCAL, '--no-auth-warning', 'PING'],
        env: { REDISCLI_AUTH: c.password },
        expect: 'PONG',
      };
  }
}

/** The engine's own consistent dump, written to stdout. */
export function dumpCommand(engine: DatabaseEngine, c: DatabaseCredentials): ExecCommand {
  switch (engine) {
    case 'postgresql':
      return {
        tool: 'pg_dump',
        cmd: ['pg_dump', '-Fc', ...LOCAL, '-U', c.user, '-d', c.database],
        env: { PGPASSWORD: c.password },
      };
    case 'mariadb':
      // One transaction's snapshot of InnoDB tables; tablespaces need PROCESS, which the app's user lacks.
      return {
        tool: 'mariadb-dump',
        cmd: [
          'mariadb-dump',
          '--protocol=TCP',
          ...LOCAL,
          '-u',
          c.user,
          '--single-transaction',
          '--routines',
          '--triggers',
          '--events',
          '--no-tablespaces',
          c.database,
        ],
        env: { MYSQL_PWD: c.password },
      };
    case 'redis':
      // A replica's full sync, written as an RDB file: consistent as of one moment, without touching dump.rdb.
      return {
        tool: 'redis-cli --rdb',
        cmd: ['redis-cli', ...LOCAL, '--no-auth-warning', '--rdb', '-'],
        env: { REDISCLI_AUTH: c.password },
      };
  }
}

/**
 * pg_restore reading the dump on stdin, in one transaction: a dump that breaks off or is corrupt rolls back whole,
 * and the database keeps what it held.
 */
export const pgRestoreCommand = (c: DatabaseCredentials): ExecCommand => ({
  tool: 'pg_restore',
  cmd: [
    'pg_restore',
    '--clean',
    '--if-exists',
    '--no-owner',
    '--single-transaction',
    '--exit-on-error',
    ...LOCAL,
    '-U',
    c.user,
    '-d',
    c.database,
  ],
  env: { PGPASSWORD: c.password },
});

/** Writes stdin to `file` (inside the container). */
export const receiveCommand = (file: string, tool: string): ExecCommand => ({
  tool,
  cmd: ['dd', `of=${file}`, 'bs=1M', 'status=none'],
});

/** MariaDB's root over the container's socket (unix_socket authentication of the OS user root): one SQL run. */
export const mariadbRoot = (sql: string, database?: string): ExecCommand => ({
  tool: 'mariadb',
  cmd: ['mariadb', ...(database ? [`--database=${database}`] : []), '-e', sql],
});
