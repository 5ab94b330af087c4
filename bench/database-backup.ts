// Database backup and restore of a PostgreSQL database of about 1 GB, through the api and a real worker, next to a bare
// `pg_dump -Fc` and `pg_restore` of the same database run by `docker exec` in its own container, in the same run.
// Never asserts. Run: node --import tsx bench/database-backup.ts (BENCH_N runs, default 3; BENCH_DB_MB, default 1024)
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { Client, Connection } from '@temporalio/client';

import { execRun } from '@activities/providers/engine-exec';
import { backupWorkflowId, restoreWorkflowId } from '@shared/contracts/database';
import { createDockerClient } from '@shared/engine/docker-client';

import { median, rssMb, startService, until } from './harness';

const run = promisify(execFile);
const N = Number(process.env.BENCH_N ?? 3);
const TARGET_BYTES = Number(process.env.BENCH_DB_MB ?? 1024) * 1024 * 1024;
/** Room for the data, its WAL and the baseline's restored copy in the same server. */
const SIZE_GB = 5;
/** Rows of 4 random MD5s (128 hex characters): about 6,400 to a MB on disk, and a dump that compresses only ~2x. */
const BATCH_ROWS = 500_000;
const BARE_DB = 'bench_bare_restore';
const BARE_FILE = '/tmp/bench.dump';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Credentials {
  user: string;
  password: string;
  database: string;
}

const secondsOf = (ms: number) => (ms / 1000).toFixed(1);
const spread = (v: number[]) =>
  `${secondsOf(median(v)).padStart(6)} s (${secondsOf(Math.min(...v))}–${secondsOf(Math.max(...v))})`;

/** The worker's own peak resident set since it started (the kernel's high-water mark), in MB. */
async function peakRssMb(pid: number): Promise<number | undefined> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : undefined;
}

/** Milliseconds each activity of a workflow took, scheduled to completed, summed by activity type. */
async function activityTimes(temporal: Client, workflowId: string): Promise<Record<string, number>> {
  const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const at = (e: (typeof events)[number]) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
  const scheduled = new Map<number, { type: string; at: number }>();
  const out: Record<string, number> = {};
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(Number(e.eventId), { type: s.activityType?.name ?? '?', at: at(e) });
    const done = e.activityTaskCompletedEventAttributes;
    const from = done && scheduled.get(Number(done.scheduledEventId));
    if (from) out[from.type] = (out[from.type] ?? 0) + at(e) - from.at;
  }
  return out;
}

async function main() {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  const volumesDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bench-volumes-'));
  const svc = await startService({ VOLUMES_DIR: volumesDir });
  const headers = { authorization: `Bearer ${svc.org.token}`, 'content-type': 'application/json' };
  const call = async (method: string, p: string, body?: unknown): Promise<Json> => {
    const r = await fetch(`${svc.base}/platform${p}`, {
      method,
      headers,
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    return { ...(text ? (JSON.parse(text) as Json) : {}), http: r.status };
  };
  const connection = await Connection.connect({ address: svc.env.TEMPORAL_ADDRESS! });
  const temporal = new Client({ connection, namespace: svc.env.TEMPORAL_NAMESPACE ?? 'default' });
  const made: string[] = [];

  /** Polls `p` every 100 ms until its `status` is `want`; fails at once on failed (`until` retries what throws). */
  const reads = async (p: string, want: string) => {
    const d = await until(
      async () => {
        const got = (await call('GET', p)).data as Json;
        return got.status === want || got.status === 'failed' ? got : undefined;
      },
      1_800_000,
      100,
    );
    if (d.status === 'failed') throw new Error(`${p} failed: ${d.error}`);
    return d;
  };
  const ready = (id: string) => reads(`/databases/${id}`, 'ready');
  const container = (id: string) => `slipway-db-${id}`;
  const sql = async (id: string, c: Credentials, text: string, database = c.database) =>
    (
      await execRun(docker, container(id), {
        cmd: [
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
          database,
          '-c',
          text,
        ],
        env: { PGPASSWORD: c.password },
      })
    ).stdout.trim();
  const dockerExec = (id: string, env: Record<string, string>, args: string[], user?: string) =>
    run(
      'docker',
      [
        'exec',
        ...(user ? ['-u', user] : []),
        // By name only: the CLI passes the value from its own environment, so no password is in its arguments.
        ...Object.keys(env).flatMap((k) => ['-e', k]),
        container(id),
        ...args,
      ],
      { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } },
    );

  // RSS of the worker sampled every 250 ms, its maximum kept per phase.
  let phase = 'setup';
  const sampledPeak: Record<string, number> = {};
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const mb = await rssMb(svc.pids.worker);
      if (mb !== undefined) sampledPeak[phase] = Math.max(sampledPeak[phase] ?? 0, mb);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();

  try {
    const project = await call('POST', '/projects', { name: 'bench-databases' });
    if (project.http >= 300) throw new Error(`project: ${JSON.stringify(project)}`);
    const created = await call('POST', '/databases', {
      projectId: project.data.id,
      engine: 'postgresql',
      name: 'big',
      sizeGb: SIZE_GB,
    });
    if (created.http !== 201) throw new Error(`database: ${JSON.stringify(created)}`);
    const id = String(created.data.id);
    made.push(id);
    await ready(id);
    const creds = (await call('GET', `/databases/${id}/connection`)).data as Credentials;

    // The data, loaded inside the container by psql until the database is as big as asked.
    const t0 = performance.now();
    await sql(id, creds, 'CREATE TABLE bench (id bigint PRIMARY KEY, payload text NOT NULL)');
    let rows = 0;
    while (Number(await sql(id, creds, 'SELECT pg_database_size(current_database())')) < TARGET_BYTES) {
      await sql(
        id,
        creds,
        `INSERT INTO bench SELECT i, md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text) FROM generate_series(${rows + 1}, ${rows + BATCH_ROWS}) i`,
      );
      rows += BATCH_ROWS;
    }
    await sql(id, creds, 'VACUUM ANALYZE bench');
    const dbBytes = Number(await sql(id, creds, 'SELECT pg_database_size(current_database())'));
    const tableBytes = Number(await sql(id, creds, "SELECT pg_total_relation_size('bench')"));
    const checksum = await sql(id, creds, 'SELECT count(*), sum(length(payload)), max(id) FROM bench');
    console.error(
      `loaded ${rows} rows (${(dbBytes / 2 ** 20).toFixed(0)} MiB) in ${secondsOf(performance.now() - t0)} s`,
    );
    const atRest = await rssMb(svc.pids.worker);

    const slipBackup: number[] = [];
    const slipRestore: number[] = [];
    const bareDump: number[] = [];
    const bareRestore: number[] = [];
    const breakdown: Record<string, number[]> = {};
    const note = (times: Record<string, number>, prefix: string) => {
      for (const [k, v] of Object.entries(times)) (breakdown[`${prefix} ${k}`] ??= []).push(v);
    };
    let dumpBytes = 0;
    let bareDumpBytes = 0;
    for (let i = 0; i < N; i++) {
      // (a) Slipway's backup: from the POST to complete.
      phase = 'backup';
      let t = performance.now();
      const posted = await call('POST', `/databases/${id}/backups`);
      if (posted.http !== 202) throw new Error(`backup: ${JSON.stringify(posted)}`);
      const backupId = String(posted.data.id);
      const done = await reads(`/databases/${id}/backups/${backupId}`, 'complete');
      slipBackup.push(performance.now() - t);
      dumpBytes = Number(done.sizeBytes);
      note(await activityTimes(temporal, backupWorkflowId(backupId)), 'backup:');

      // (b) Slipway's restore to a new database: from the POST to the new database ready (its data loaded before).
      phase = 'restore';
      t = performance.now();
      const restored = await call('POST', `/databases/${id}/backups/${backupId}/restore`, {});
      if (restored.http !== 202) throw new Error(`restore: ${JSON.stringify(restored)}`);
      const newId = String(restored.data.databaseId);
      made.push(newId);
      await ready(newId);
      slipRestore.push(performance.now() - t);
      phase = 'between';
      note(await activityTimes(temporal, restoreWorkflowId(String(restored.data.restoreId))), 'restore:');
      const newCreds = (await call('GET', `/databases/${newId}/connection`)).data as Credentials;
      const got = await sql(newId, newCreds, 'SELECT count(*), sum(length(payload)), max(id) FROM bench');
      if (got !== checksum) throw new Error(`the restored database holds ${got}, not ${checksum}`);
      // Gone before the next run: each holds a volume of SIZE_GB.
      await call('DELETE', `/databases/${newId}`);

      // (c) Bare pg_dump -Fc of the same database, by docker exec, to a file in the container.
      const pg = { PGPASSWORD: creds.password };
      const tcp = ['-h', '127.0.0.1', '-U', creds.user];
      t = performance.now();
      await dockerExec(id, pg, ['pg_dump', '-Fc', ...tcp, '-d', creds.database, '-f', BARE_FILE]);
      bareDump.push(performance.now() - t);
      bareDumpBytes = Number((await dockerExec(id, {}, ['stat', '-c', '%s', BARE_FILE])).stdout.trim());

      // (d) Bare pg_restore of that file into a fresh database of the same server, as Slipway's restore runs it.
      await dockerExec(id, {}, ['psql', '-X', '-q', '-c', `DROP DATABASE IF EXISTS ${BARE_DB}`], 'postgres');
      await dockerExec(
        id,
        {},
        ['psql', '-X', '-q', '-c', `CREATE DATABASE ${BARE_DB} OWNER ${creds.user}`],
        'postgres',
      );
      t = performance.now();
      await dockerExec(id, pg, [
        'pg_restore',
        '--no-owner',
        '--single-transaction',
        '--exit-on-error',
        ...tcp,
        '-d',
        BARE_DB,
        BARE_FILE,
      ]);
      bareRestore.push(performance.now() - t);
      const bareGot = await sql(id, creds, 'SELECT count(*), sum(length(payload)), max(id) FROM bench', BARE_DB);
      if (bareGot !== checksum) throw new Error(`the bare restore holds ${bareGot}, not ${checksum}`);
      await dockerExec(id, {}, ['psql', '-X', '-q', '-c', `DROP DATABASE ${BARE_DB}`], 'postgres');
      await dockerExec(id, {}, ['rm', '-f', BARE_FILE]);
      console.error(
        `run ${i + 1}/${N}: backup ${secondsOf(slipBackup[i]!)} s, restore ${secondsOf(slipRestore[i]!)} s, ` +
          `bare dump ${secondsOf(bareDump[i]!)} s, bare restore ${secondsOf(bareRestore[i]!)} s`,
      );
    }
    const peak = await peakRssMb(svc.pids.worker);

    const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `\nSlipway database backup benchmark (${new Date().toISOString()}, ${process.arch}, node ${process.version})`,
    );
    console.log(
      `PostgreSQL database: pg_database_size ${dbBytes} bytes (${mib(dbBytes)}), table with index ${mib(tableBytes)}, ` +
        `${rows} rows; dump (pg_dump -Fc) ${dumpBytes} bytes (${mib(dumpBytes)}) through Slipway, ${bareDumpBytes} bare`,
    );
    console.log(`median of ${N} runs (min–max)`);
    console.log(`${''.padEnd(34)}${'slipway'.padEnd(24)}${'bare'.padEnd(24)}ratio`);
    const row = (name: string, s: number[], b: number[]) =>
      console.log(
        `${name.padEnd(34)}${spread(s).padEnd(24)}${spread(b).padEnd(24)}${(median(s) / median(b)).toFixed(2)}x`,
      );
    row('backup (POST → complete)', slipBackup, bareDump);
    row('restore to new (POST → ready)', slipRestore, bareRestore);
    console.log(`\nwhere Slipway's time goes (activity scheduled → completed, median)`);
    for (const [k, v] of Object.entries(breakdown))
      console.log(`  ${k.padEnd(40)}${secondsOf(median(v)).padStart(6)} s`);
    const show = (mb: number | undefined) => (mb === undefined ? 'n/a' : `${mb.toFixed(0)} MB`);
    console.log(
      `\nworker resident memory: at rest ${show(atRest)}, sampled peak during backups ${show(sampledPeak.backup)}, ` +
        `during restores ${show(sampledPeak.restore)}; peak since start (VmHWM) ${show(peak)}`,
    );
  } finally {
    sampling = false;
    await sampler;
    for (const id of made) await call('DELETE', `/databases/${id}`).catch(() => undefined);
    for (const id of made)
      await until(
        async () => ((await call('GET', `/databases/${id}`)).http === 404 ? true : undefined),
        120_000,
        500,
      ).catch(() => console.error(`database ${id} was not removed`));
    await connection.close();
    await svc.stop();
    await fs.rm(volumesDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
