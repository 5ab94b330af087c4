import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { ifAbsent } from '@shared/ignore';

import { ensureDebianPackages } from './debian';
import type { PartContext } from './part';
import { type Managed, startServer } from './process';
import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

export const FERRETDB_BACKENDS = ['sqlite', 'postgresql'] as const;
export type FerretdbBackend = (typeof FERRETDB_BACKENDS)[number];

/**
 * Which storage the embedded FerretDB writes to. SQLite by default, though PostgreSQL took a deployment's writes many
 * times faster under concurrency (README, Performance, "The embedded database"): it adds a second server, its memory,
 * an initdb on first start and Debian's package to a new machine, and that first run was not tried on a machine
 * without PostgreSQL.
 */
export function ferretdbBackend(value = process.env.FERRETDB_BACKEND): FerretdbBackend {
  if (value === undefined || value === '') return 'sqlite';
  if ((FERRETDB_BACKENDS as readonly string[]).includes(value)) return value as FerretdbBackend;
  throw new StackError(
    `FERRETDB_BACKEND is "${value}"; set it to ${FERRETDB_BACKENDS.join(' or ')} (or leave it unset for sqlite)`,
  );
}

/** The newest PostgreSQL Debian's packages installed: each major version has its own `bin/` there. */
async function binDir(): Promise<string> {
  const root = '/usr/lib/postgresql';
  const versions = ((await fs.readdir(root).catch(ifAbsent([] as string[]))) as string[])
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = path.join(root, v, 'bin');
    if (await fs.access(path.join(dir, 'postgres')).then(() => true, ifAbsent(false))) return dir;
  }
  throw new StackError(
    `no PostgreSQL server under ${root}/*/bin; install Debian's postgresql package or leave FERRETDB_BACKEND unset`,
  );
}

/**
 * PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` account Debian's package
 * creates, and that account needs to pass through the directories above it (search only, no listing).
 */
async function serverAccount(dirsAbove: string[]): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const id = async (flag: string) => Number((await execFileAsync('id', [flag, 'postgres'])).stdout.trim());
  const account = await Promise.all([id('-u'), id('-g')]).then(
    ([uid, gid]) => ({ uid, gid }),
    (err: Error) => {
      throw new StackError(
        `no \`postgres\` account to run PostgreSQL as, since root may not (${err.message.trim()}); reinstall Debian's postgresql`,
      );
    },
  );
  for (const dir of dirsAbove) {
    const { mode } = await fs.stat(dir);
    if ((mode & 0o001) === 0) await fs.chmod(dir, (mode & 0o7777) | 0o001);
  }
  return account;
}

/**
 * Starts the stack's own PostgreSQL for FerretDB: a cluster under `<dir>/postgresql` (made on first start), on
 * loopback only, with `trust` for its one role as FerretDB itself takes any loopback client. Returns FerretDB's URL.
 */
export async function startPostgres(
  ctx: PartContext,
  dir: string,
  port: number,
): Promise<{ url: string; proc: Managed }> {
  if ((await ensureDebianPackages(['postgresql'], "FerretDB's PostgreSQL backend", ctx.progress)).length > 0) {
    ctx.progress("installed Debian's postgresql");
  }
  const bin = await binDir();
  const account = await serverAccount([ctx.dataDir, dir]);
  const as = account ? { uid: account.uid, gid: account.gid } : {};
  const pgdata = path.join(dir, 'postgresql');
  if (!(await fs.access(path.join(pgdata, 'PG_VERSION')).then(() => true, ifAbsent(false)))) {
    // Made aside and renamed: an initdb cut short leaves no half cluster for the next start to trip on.
    ctx.progress('creating the PostgreSQL cluster');
    const fresh = `${pgdata}.init`;
    await fs.rm(fresh, { recursive: true, force: true });
    await fs.mkdir(fresh, { mode: 0o700 });
    if (account) await fs.chown(fresh, account.uid, account.gid);
    await execFileAsync(
      path.join(bin, 'initdb'),
      ['-D', fresh, '-U', 'ferretdb', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...as, cwd: fresh },
    ).catch((err: Error & { stderr?: string }) => {
      throw new StackError(`initdb failed: ${(err.stderr ?? err.message).trim().split('\n').pop()}`);
    });
    await fs.rename(fresh, pgdata);
  }
  ctx.progress('starting PostgreSQL');
  const args = ['-D', pgdata, '-p', `${port}`, '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  const psql = (sql: string, db = 'postgres') =>
    execFileAsync(path.join(bin, 'psql'), [
      '-h',
      '127.0.0.1',
      '-p',
      `${port}`,
      '-U',
      'ferretdb',
      '-d',
      db,
      '-tAc',
      sql,
    ]);
  const proc = await startServer(
    'PostgreSQL',
    [
      'postgres',
      path.join(bin, 'postgres'),
      args,
      { logFile: path.join(dir, 'postgresql.log'), cwd: pgdata, user: account, stopSignal: 'SIGINT' },
    ],
    async () => (await psql('SELECT 1')).stdout.trim() === '1',
    async () => {
      if ((await psql("SELECT 1 FROM pg_database WHERE datname = 'ferretdb'")).stdout.trim() !== '1') {
        await psql('CREATE DATABASE ferretdb');
      }
    },
    ctx.signal,
  );
  return { url: `postgres://ferretdb@127.0.0.1:${port}/ferretdb`, proc };
}

/** FerretDB's storage flags; for PostgreSQL (`pgPort` given) its server is started first and handed back to stop. */
export async function ferretdbStorage(
  ctx: PartContext,
  dir: string,
  pgPort: number | undefined,
): Promise<{ args: string[]; label: string; started: Managed[] }> {
  if (pgPort === undefined)
    return { args: ['--handler=sqlite', `--sqlite-url=file:${dir}/`], label: 'SQLite', started: [] };
  const { url, proc } = await startPostgres(ctx, dir, pgPort);
  return { args: ['--handler=postgresql', `--postgresql-url=${url}`], label: 'PostgreSQL', started: [proc] };
}
