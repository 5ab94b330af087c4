import type { Readable } from 'node:stream';

import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import {
  databaseContainerName,
  type DatabaseCredentials,
  type DatabaseEngine,
  databaseHost,
  ENGINE_PORT,
  isDatabaseEngine,
  isDatabaseId,
} from '@shared/databases/engines';
import { readContainerLogs } from '@shared/engine/logs';
import { ignore } from '@shared/ignore';

import {
  checkCredentials,
  DATA_DIR,
  dumpCommand,
  MARIADB_CHECK_DB,
  mariadbRoot,
  pgRestoreCommand,
  readyCommand,
  receiveCommand,
  REDIS_DUMP,
  RESTORE_FILE,
  serverEnv,
} from './engine-database-tools';
import { EngineToolError, execRun, execStream } from './engine-exec';
import type { createOrgNetworks } from './engine-network';
import type { EngineVolumes, VolumeRef } from './engine-volumes';

export { EngineToolError } from './engine-exec';

export interface DatabaseSpec {
  databaseId: string;
  orgId: string;
  engine: DatabaseEngine;
  /** The volume the server keeps its data in; made (or found) at its size before the container starts. */
  volume: VolumeRef & { sizeGb: number };
  credentials: DatabaseCredentials;
  memoryMb?: number;
}

export interface DatabaseContainerState {
  running: boolean;
  /** The engine's word: running, restarting, exited, created… */
  status: string;
  containerId: string;
  image: string;
  restarts: number;
  engine: DatabaseEngine | undefined;
  orgId: string | undefined;
}

/** The label naming the database a container serves: remove and inspect find it by this and its name. */
export const DATABASE_ID_LABEL = 'dev.slipway.database-id';

/** A database that has not answered this long after its start has failed; a first start initialises its files. */
const READY_TIMEOUT_MS = 120_000;
const DEFAULT_MEMORY_MB = 512;
/** How long a stop waits for the server to write its last state before the engine kills it. */
const STOP_GRACE_S = 60;
/** Ceiling of processes: PostgreSQL forks one per connection, so room for a few hundred. */
const PIDS_LIMIT = 512;
/**
 * What the image's entrypoint needs as root before it drops to the server's own user (setpriv): own the data
 * directory (CHOWN, FOWNER, DAC_OVERRIDE) and switch user (SETUID, SETGID). Nothing else: no raw sockets, no ports
 * below 1024, no signals to other users' processes.
 */
const CAP_ADD = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'SETGID', 'SETUID'];
const LOG_CONFIG = { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } };
/** A database comes back after a crash or an engine restart. */
const RESTART = { Name: 'unless-stopped' };
/** PostgreSQL's parallel queries share memory through /dev/shm, 64 MB by default: too little for a sort of any size. */
const PG_SHM_BYTES = 256 * 1024 * 1024;
const ORG_ID = /^[A-Za-z0-9_-]{1,100}$/;

const statusCode = (err: unknown) => (err as { statusCode?: number }).statusCode;
const settled =
  (...codes: number[]) =>
  (err: unknown) => {
    if (!codes.includes(statusCode(err) ?? 0)) throw err;
  };

function checkId(databaseId: string): void {
  if (!isDatabaseId(databaseId)) throw new TypeError('a database ID must be a lower-case UUID (8-4-4-4-12 hex digits)');
}

function checkSpec(spec: DatabaseSpec): void {
  checkId(spec.databaseId);
  if (typeof spec.orgId !== 'string' || !ORG_ID.test(spec.orgId))
    throw new TypeError('an org ID must be 1 to 100 of [A-Za-z0-9_-]');
  if (!isDatabaseEngine(spec.engine)) throw new TypeError('a database engine is one of postgresql, mariadb, redis');
  if (spec.volume?.orgId !== spec.orgId) throw new TypeError("a database's volume must belong to its organisation");
  checkCredentials(spec.engine, spec.credentials);
  const mb = spec.memoryMb ?? DEFAULT_MEMORY_MB;
  if (!Number.isSafeInteger(mb) || mb < 64 || mb > 65_536)
    throw new TypeError("a database's memory must be a whole number of MB from 64 to 65536");
}

/**
 * Organisations' databases as containers on the engine (docs/architecture.md, "Databases"): one container per
 * database from Slipway's own image of its engine, on its organisation's network under a stable host name, its data
 * on a Slipway volume, no port published. Dumps and restores run the engine's own tools inside it.
 */
export function createEngineDatabases(deps: {
  docker: Docker;
  instance: string;
  volumes: EngineVolumes;
  networks: ReturnType<typeof createOrgNetworks>;
  images: Record<DatabaseEngine, string>;
}) {
  const { docker, instance, volumes, networks } = deps;

  async function inspectOurs(databaseId: string): Promise<Docker.ContainerInspectInfo | undefined> {
    const info = await docker
      .getContainer(databaseContainerName(databaseId))
      .inspect()
      .catch((err: unknown) => {
        if (statusCode(err) === 404) return undefined;
        throw err;
      });
    if (!info) return undefined;
    const labels = info.Config.Labels ?? {};
    if (labels[LABELS.instance] !== instance || labels[DATABASE_ID_LABEL] !== databaseId)
      throw new Error(`the container ${info.Name.replace(/^\//, '')} belongs to another Slipway installation`);
    return info;
  }

  async function create(spec: DatabaseSpec, network: string): Promise<void> {
    const memory = (spec.memoryMb ?? DEFAULT_MEMORY_MB) * 1024 * 1024;
    await docker.createContainer({
      name: databaseContainerName(spec.databaseId),
      Image: deps.images[spec.engine],
      Env: Object.entries(serverEnv(spec.credentials)).map(([k, v]) => `${k}=${v}`),
      Labels: {
        [LABELS.managed]: 'true',
        [LABELS.orgId]: spec.orgId,
        [LABELS.instance]: instance,
        [DATABASE_ID_LABEL]: spec.databaseId,
        'dev.slipway.database-engine': spec.engine,
      },
      HostConfig: {
        NetworkMode: network,
        // No PortBindings: the database is reached only over its organisation's network.
        Mounts: [volumes.mountSpec(spec.volume, DATA_DIR)],
        Memory: memory,
        MemorySwap: memory,
        PidsLimit: PIDS_LIMIT,
        RestartPolicy: RESTART,
        SecurityOpt: ['no-new-privileges'],
        CapDrop: ['ALL'],
        CapAdd: CAP_ADD,
        LogConfig: LOG_CONFIG,
        ...(spec.engine === 'postgresql' ? { ShmSize: PG_SHM_BYTES } : {}),
      },
      NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [databaseHost(spec.databaseId)] } } },
    });
  }

  /** Polls the engine's own client until it answers with the app's credentials, or fails with the server's last lines. */
  async function waitReady(spec: DatabaseSpec, containerId: string): Promise<void> {
    const probe = readyCommand(spec.engine, spec.credentials);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let last = '';
    for (let i = 0; ; i++) {
      const answer = await execRun(docker, containerId, probe).then(
        (r) => r.stdout.trim(),
        (err: unknown) => {
          last = (err as Error).message;
          return undefined;
        },
      );
      if (answer === probe.expect) return;
      if (Date.now() > deadline) {
        const lines = await readContainerLogs(docker, containerId, 20).catch(
          ignore('the logs only illustrate the failure', []),
        );
        const info = await docker.getContainer(containerId).inspect();
        throw new Error(
          `the ${spec.engine} database ${spec.databaseId} did not answer within ${READY_TIMEOUT_MS / 1000} s ` +
            `(container ${info.State.Status}, ${info.RestartCount} restarts; last probe: ${last || answer || 'no answer'}). ` +
            `Its last log lines: ${lines.map((l) => l.message).join(' | ') || '(none)'}`,
        );
      }
      await new Promise((r) => setTimeout(r, Math.min(100 * (i + 1), 1000)));
    }
  }

  async function start(spec: DatabaseSpec): Promise<{ host: string; port: number }> {
    checkSpec(spec);
    const name = databaseContainerName(spec.databaseId);
    await volumes.ensure(spec.volume);
    const [network, existing] = await Promise.all([networks.ensure(spec.orgId), inspectOurs(spec.databaseId)]);
    // 409: an earlier attempt made it; its state is read below.
    if (!existing) await create(spec, network).catch(settled(409));
    const info = existing ?? (await docker.getContainer(name).inspect());
    if (!info.State.Running) {
      if (info.HostConfig.RestartPolicy?.Name !== RESTART.Name)
        await docker.getContainer(info.Id).update({ RestartPolicy: RESTART });
      await docker.getContainer(info.Id).start().catch(settled(304));
    }
    await waitReady(spec, info.Id);
    return { host: databaseHost(spec.databaseId), port: ENGINE_PORT[spec.engine] };
  }

  async function running(spec: DatabaseSpec): Promise<string> {
    checkSpec(spec);
    const info = await inspectOurs(spec.databaseId);
    if (!info?.State.Running) throw new Error(`the database ${spec.databaseId} is not running; start it first`);
    return info.Id;
  }

  /** Removes a restore's upload, whatever happened to it. */
  const dropUpload = (id: string) =>
    execRun(docker, id, { cmd: ['rm', '-f', RESTORE_FILE] }).catch(
      ignore('a leftover upload is replaced by the next restore and takes only room on the volume', undefined),
    );

  async function restoreMariadb(spec: DatabaseSpec, id: string, source: Readable): Promise<void> {
    const db = spec.credentials.database;
    try {
      await execRun(docker, id, receiveCommand(RESTORE_FILE, 'receiving the dump'), source);
      // mariadb-dump ends every whole dump with this comment: a dump cut short at a statement's end lacks it.
      const { stdout } = await execRun(docker, id, { cmd: ['tail', '-c', '512', RESTORE_FILE] });
      if (!/-- Dump completed/.test(stdout))
        throw new EngineToolError('mariadb', null, 'the dump is incomplete: it lacks the "-- Dump completed" line');
      // Loaded into a scratch database first: a dump MariaDB cannot load fails here, before the app's is touched.
      await execRun(
        docker,
        id,
        mariadbRoot(`DROP DATABASE IF EXISTS ${MARIADB_CHECK_DB}; CREATE DATABASE ${MARIADB_CHECK_DB}`),
      );
      try {
        await execRun(docker, id, mariadbRoot(`source ${RESTORE_FILE}`, MARIADB_CHECK_DB));
      } finally {
        await execRun(docker, id, mariadbRoot(`DROP DATABASE IF EXISTS ${MARIADB_CHECK_DB}`)).catch(
          ignore('the next restore drops it first', undefined),
        );
      }
      // Its grants are kept by name, so the app's user owns the new database as it did the old.
      await execRun(
        docker,
        id,
        mariadbRoot(
          `DROP DATABASE \`${db}\`; CREATE DATABASE \`${db}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
        ),
      );
      await execRun(docker, id, mariadbRoot(`source ${RESTORE_FILE}`, db));
    } finally {
      await dropUpload(id);
    }
  }

  async function restoreRedis(spec: DatabaseSpec, id: string, source: Readable): Promise<void> {
    const cli = (...args: string[]) => ({
      tool: 'redis-cli',
      cmd: ['redis-cli', '-h', '127.0.0.1', '--no-auth-warning', ...args],
      env: { REDISCLI_AUTH: spec.credentials.password },
    });
    try {
      await execRun(docker, id, receiveCommand(RESTORE_FILE, 'receiving the dump'), source);
      await execRun(docker, id, { tool: 'redis-check-rdb', cmd: ['redis-check-rdb', RESTORE_FILE] });
      await execRun(docker, id, { cmd: ['chown', 'redis:redis', RESTORE_FILE] });
      // No snapshot may be written over the new dump.rdb before the server reads it: saves off, the one running ends.
      await execRun(docker, id, cli('CONFIG', 'SET', 'save', ''));
      for (;;) {
        const { stdout } = await execRun(docker, id, cli('INFO', 'persistence'));
        if (/rdb_bgsave_in_progress:0/.test(stdout)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await execRun(docker, id, { cmd: ['mv', '-f', RESTORE_FILE, REDIS_DUMP] });
    } finally {
      await dropUpload(id);
    }
    // With saves off the stop writes nothing; the start loads dump.rdb and the entrypoint turns saves back on.
    await docker.getContainer(id).restart({ t: STOP_GRACE_S });
    await waitReady(spec, id);
  }

  return {
    start,

    /** Removes the database's container (the volume and its data stay), then its org network once unused. */
    async remove(databaseId: string): Promise<void> {
      const info = await inspectOurs(databaseId);
      if (!info) return;
      const container = docker.getContainer(info.Id);
      // Stopped before removed, never killed: Redis writes its snapshot and the others close their files on a stop.
      await container.update({ RestartPolicy: { Name: 'no' } }).catch(settled(404));
      await container.stop({ t: STOP_GRACE_S }).catch(settled(304, 404));
      await container.remove({ force: true, v: false }).catch(settled(404, 409));
      const orgId = info.Config.Labels?.[LABELS.orgId];
      if (orgId) await networks.removeIfUnused(orgId);
    },

    /**
     * The engine's own consistent dump, streamed out of the container. The stream errors (an EngineToolError naming
     * the tool, its exit code and last lines of stderr) when the tool fails, never ending as if the dump were whole.
     */
    async dump(spec: DatabaseSpec): Promise<Readable> {
      const id = await running(spec);
      return execStream(docker, id, dumpCommand(spec.engine, spec.credentials));
    },

    /**
     * Loads a dump into the running database in place of what it holds. A corrupt or cut-off dump fails with an
     * EngineToolError and leaves the data as it was: PostgreSQL restores in one transaction, MariaDB loads it into a
     * scratch database first, Redis checks the RDB file before it replaces dump.rdb.
     */
    async restore(spec: DatabaseSpec, source: Readable): Promise<void> {
      const id = await running(spec);
      if (spec.engine === 'postgresql') await execRun(docker, id, pgRestoreCommand(spec.credentials), source);
      else if (spec.engine === 'mariadb') await restoreMariadb(spec, id, source);
      else await restoreRedis(spec, id, source);
    },

    async inspect(databaseId: string): Promise<DatabaseContainerState | undefined> {
      const info = await inspectOurs(databaseId);
      if (!info) return undefined;
      const engine = info.Config.Labels?.['dev.slipway.database-engine'];
      return {
        running: info.State.Running,
        status: info.State.Status,
        containerId: info.Id,
        image: info.Config.Image,
        restarts: info.RestartCount,
        engine: isDatabaseEngine(engine) ? engine : undefined,
        orgId: info.Config.Labels?.[LABELS.orgId],
      };
    },
  };
}

export type EngineDatabases = ReturnType<typeof createEngineDatabases>;
