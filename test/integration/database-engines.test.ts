import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';

import type Docker from 'dockerode';

import {
  createEngineDatabases,
  type DatabaseSpec,
  type EngineDatabases,
  EngineToolError,
} from '@activities/providers/engine-databases';
import { createOrgNetworks } from '@activities/providers/engine-network';
import { createEngineVolumes, type EngineVolumes } from '@activities/providers/engine-volumes';
import { parseMountinfo } from '@activities/providers/volume-host';
import {
  connectionUrl,
  type DatabaseEngine,
  databaseHost,
  ENGINE_PORT,
  generateCredentials,
} from '@shared/databases/engines';
import { createDockerClient } from '@shared/engine/docker-client';

import { DATABASE_IMAGES } from '../helpers/base-images';

/** Per engine: shell scripts a client container runs against $URL (and $HOST, $PW for MariaDB, whose client takes no URL). */
const CLIENT: Record<DatabaseEngine, { write: string; writeMore: string; read: string; probe: string }> = {
  postgresql: {
    write: `psql -X -v ON_ERROR_STOP=1 "$URL" -c "CREATE TABLE t (v text); INSERT INTO t VALUES ('a'), ('b')"`,
    writeMore: `psql -X -v ON_ERROR_STOP=1 "$URL" -c "INSERT INTO t VALUES ('c')"`,
    read: `psql -XAt -v ON_ERROR_STOP=1 "$URL" -c "SELECT string_agg(v, ',' ORDER BY v) FROM t"`,
    probe: `pg_isready -h "$HOST" -p 5432 -t 3`,
  },
  mariadb: {
    write: `MYSQL_PWD="$PW" mariadb -h "$HOST" -u app app -e "CREATE TABLE t (v varchar(8)); INSERT INTO t VALUES ('a'), ('b')"`,
    writeMore: `MYSQL_PWD="$PW" mariadb -h "$HOST" -u app app -e "INSERT INTO t VALUES ('c')"`,
    read: `MYSQL_PWD="$PW" mariadb -h "$HOST" -u app -N -B app -e "SELECT GROUP_CONCAT(v ORDER BY v) FROM t"`,
    probe: `MYSQL_PWD="$PW" mariadb -h "$HOST" -u app --connect-timeout=3 app -e "SELECT 1"`,
  },
  redis: {
    write: `redis-cli --no-auth-warning -u "$URL" SET a 1 && redis-cli --no-auth-warning -u "$URL" SET b 1`,
    writeMore: `redis-cli --no-auth-warning -u "$URL" SET c 1`,
    read: `redis-cli --no-auth-warning -u "$URL" KEYS '*' | sort | paste -sd, -`,
    probe: `[ "$(timeout 5 redis-cli --no-auth-warning -u "$URL" PING)" = PONG ]`,
  },
};

const IMAGE: Record<DatabaseEngine, string> = DATABASE_IMAGES;

describe.each(['postgresql', 'mariadb', 'redis'] as const)(
  'the %s engine: a database container with its data on a volume, dumped and restored with its own tools',
  (engine) => {
    let docker: Docker;
    let dir: string;
    let volumes: EngineVolumes;
    let networks: ReturnType<typeof createOrgNetworks>;
    let dbs: EngineDatabases;
    const orgA = `org-${randomUUID().slice(0, 8)}`;
    const orgB = `org-${randomUUID().slice(0, 8)}`;
    const instance = `dbtest-${randomUUID().slice(0, 8)}`;
    const made: DatabaseSpec[] = [];
    const clients: string[] = [];
    let first: DatabaseSpec;
    let second: DatabaseSpec;
    let dump: Buffer;

    const newSpec = (orgId: string): DatabaseSpec => {
      const spec: DatabaseSpec = {
        databaseId: randomUUID(),
        orgId,
        engine,
        volume: { volumeId: randomUUID(), orgId, sizeGb: 1 },
        credentials: generateCredentials(engine),
        memoryMb: 512,
      };
      made.push(spec);
      return spec;
    };

    /** A client container of the engine's own image on `orgId`'s network, running `script`; its exit and output. */
    async function client(orgId: string, spec: DatabaseSpec, script: string, host = databaseHost(spec.databaseId)) {
      const network = await networks.ensure(orgId);
      const c = await docker.createContainer({
        Image: IMAGE[engine],
        Entrypoint: ['sh', '-c', script],
        Env: [
          `URL=${connectionUrl(engine, host, spec.credentials)}`,
          `HOST=${host}`,
          `PW=${spec.credentials.password}`,
        ],
        Tty: true,
        Labels: { 'dev.slipway.test': instance },
        HostConfig: { NetworkMode: network },
      });
      clients.push(c.id);
      await c.start();
      const { StatusCode } = (await c.wait()) as { StatusCode: number };
      const output = (await c.logs({ stdout: true, stderr: true })).toString().trim();
      return { exitCode: StatusCode, output };
    }

    async function ok(orgId: string, spec: DatabaseSpec, script: string): Promise<string> {
      const r = await client(orgId, spec, script);
      if (r.exitCode !== 0) throw new Error(`client exited ${r.exitCode}: ${r.output}`);
      return r.output;
    }

    beforeAll(async () => {
      docker = createDockerClient(process.env.DOCKER_HOST);
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-dbs-'));
      volumes = createEngineVolumes({ docker, instance, dir });
      networks = createOrgNetworks({ docker, instance });
      dbs = createEngineDatabases({ docker, instance, volumes, networks, images: IMAGE });
      first = newSpec(orgA);
      second = newSpec(orgA);
      await dbs.start(first);
    }, 300_000);

    afterAll(async () => {
      for (const id of clients) await docker.getContainer(id).remove({ force: true }).catch(console.warn);
      for (const spec of made) await dbs.remove(spec.databaseId).catch(console.warn);
      for (const spec of made) await volumes.remove(spec.volume.volumeId).catch(console.warn);
      for (const org of [orgA, orgB]) await networks.removeIfUnused(org).catch(console.warn);
      const mounted = parseMountinfo(await fs.readFile('/proc/self/mountinfo', 'utf8')).some((m) =>
        m.mountpoint.startsWith(`${dir}/`),
      );
      if (!mounted) await fs.rm(dir, { recursive: true, force: true });
    }, 120_000);

    it('restores into a second database exactly what the first held when it was dumped', async () => {
      await ok(orgA, first, CLIENT[engine].write);
      dump = await buffer(await dbs.dump(first));
      const sha256 = createHash('sha256').update(dump).digest('hex');
      console.log(`${engine} dump: ${dump.length} bytes, sha256 ${sha256}`);
      expect(dump.length).toBeGreaterThan(0);
      await ok(orgA, first, CLIENT[engine].writeMore);
      expect(await ok(orgA, first, CLIENT[engine].read)).toBe('a,b,c');

      await dbs.start(second);
      await dbs.restore(second, Readable.from([dump]));
      expect(await ok(orgA, second, CLIENT[engine].read)).toBe('a,b');
    }, 300_000);

    it('refuses a corrupted or cut-off dump with the tool’s own error, and keeps what the database held', async () => {
      const flipped = Buffer.from(dump);
      for (let i = Math.floor(flipped.length / 3); i < flipped.length - 16; i += 7) flipped[i] = flipped[i]! ^ 0xa5;
      const cut = dump.subarray(0, Math.floor(dump.length / 2));
      for (const broken of [flipped, cut]) {
        const err = await dbs.restore(second, Readable.from([broken])).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(EngineToolError);
        expect((err as Error).message).toMatch(/pg_restore|mariadb|redis-check-rdb/);
        expect((err as Error).message).toMatch(/exit code \d+|incomplete/);
        expect(await ok(orgA, second, CLIENT[engine].read)).toBe('a,b');
      }
    }, 300_000);

    it('errors the dump stream, naming the tool and its exit code, when the tool fails', async () => {
      const wrong = { ...first, credentials: { ...first.credentials, password: 'not-the-password-at-all' } };
      const err = await buffer(await dbs.dump(wrong)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EngineToolError);
      expect((err as Error).message).toMatch(/^(pg_dump|mariadb-dump|redis-cli --rdb) failed with exit code [1-9]/);
    }, 120_000);

    it('answers by its host name on its organisation’s network only, and publishes no port', async () => {
      expect((await client(orgA, first, CLIENT[engine].probe)).exitCode).toBe(0);
      // Another organisation's container: neither the name nor the address reaches it.
      expect((await client(orgB, first, CLIENT[engine].probe)).exitCode).not.toBe(0);
      const info = await docker.getContainer(`slipway-db-${first.databaseId}`).inspect();
      const address = Object.values(info.NetworkSettings.Networks)[0]!.IPAddress;
      expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect((await client(orgB, first, CLIENT[engine].probe, address)).exitCode).not.toBe(0);
      expect(Object.values(info.NetworkSettings.Ports ?? {}).filter((b) => b && b.length > 0)).toEqual([]);
      expect(info.HostConfig.PortBindings ?? {}).toEqual({});
      expect(info.Config.ExposedPorts).toHaveProperty(`${ENGINE_PORT[engine]}/tcp`);
      expect(info.HostConfig.CapDrop).toEqual(['ALL']);
      expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
      expect(info.HostConfig.RestartPolicy?.Name).toBe('unless-stopped');
      expect(await dbs.inspect(first.databaseId)).toMatchObject({ running: true, engine, orgId: orgA });
    }, 300_000);

    it('keeps its data across remove and a new start on the same volume', async () => {
      await dbs.remove(first.databaseId);
      expect(await dbs.inspect(first.databaseId)).toBeUndefined();
      await dbs.remove(first.databaseId);
      expect(await dbs.start(first)).toEqual({ host: databaseHost(first.databaseId), port: ENGINE_PORT[engine] });
      // Idempotent: a second start finds it running.
      await dbs.start(first);
      expect(await ok(orgA, first, CLIENT[engine].read)).toBe('a,b,c');
    }, 300_000);
  },
);
