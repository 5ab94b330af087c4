import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';

import { DATABASE_ENGINES } from '@shared/databases/engines';
import { createDatabaseStore } from '@shared/databases/store';

import { client } from '../helpers/client';
import { type BackupBody, backupReads, BULK, type Credentials, databaseReads } from '../helpers/databases';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { exited, spawnWorker } from '../helpers/worker-process';

/**
 * A worker SIGKILLed while a backup streams: what it left is an unfinished multipart upload, never an object counted
 * as a backup, and the next worker takes the backup again from the start and completes it once.
 */
describe.each(DATABASE_ENGINES)('durability: a %s backup whose worker is killed mid-dump', (engine) => {
  let h: Harness;
  let dir: string;
  const workers: ChildProcess[] = [];
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), `slipway-db-crash-${engine}-`));
    h = await startHarness(
      'db-crash',
      { VOLUMES_DIR: dir, RATE_LIMIT_PLATFORM_PER_15MIN: '100000' },
      { worker: false },
    );
  }, 180_000);
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGTERM');
      await exited(w);
    }
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  it('leaves no partial object counted as a backup, and the backup completes once', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    workers.push(spawnWorker(h).child);
    const id = (
      await api.post<{ data: { id: string } }>('/platform/databases', {
        projectId: org.projectId,
        engine,
        name: 'big',
        sizeGb: 2,
      })
    ).body.data.id;
    await databaseReads(api, `/platform/databases/${id}`);
    const creds = (await api.get<{ data: Credentials }>(`/platform/databases/${id}/connection`)).body.data;
    await BULK[engine].fill(h, id, creds);
    const held = await BULK[engine].count(h, id, creds);

    const backup = (await api.post<BackupBody>(`/platform/databases/${id}/backups`)).body.data;
    const prefix = `database-backups/${org.orgId}/${id}/`;
    const { objectKey } = (await createDatabaseStore(h.db).backups.getAny(backup.id))!;
    expect(objectKey.startsWith(prefix)).toBe(true);
    // MinIO lists the unfinished uploads of one key (its prefix must be the whole key).
    const uploads = async () =>
      (await h.s3.send(new ListMultipartUploadsCommand({ Bucket: h.config.S3_BUCKET, Prefix: objectKey }))).Uploads ??
      [];
    const objects = async () =>
      (await h.s3.send(new ListObjectsV2Command({ Bucket: h.config.S3_BUCKET, Prefix: prefix }))).Contents ?? [];
    await eventually(
      async () => ((await uploads()).length > 0 ? true : undefined),
      'the dump to be streaming',
      120_000,
    );
    const first = workers[0]!;
    first.kill('SIGKILL');
    await exited(first);
    expect(first.signalCode).toBe('SIGKILL');

    // What the dead worker left: an unfinished upload, no object, and a backup still running (never complete).
    expect(await objects()).toEqual([]);
    expect((await api.get<BackupBody>(`/platform/databases/${id}/backups/${backup.id}`)).body.data.status).toBe(
      'running',
    );

    workers.push(spawnWorker(h).child);
    const done = await backupReads(api, `/platform/databases/${id}/backups/${backup.id}`, 'complete', 300_000);
    const left = await objects();
    expect(left).toHaveLength(1);
    expect(left[0]!.Size).toBe(done.sizeBytes);
    expect(await uploads()).toEqual([]);
    const all = (await api.get<{ data: { backups: { id: string }[] } }>(`/platform/databases/${id}/backups`)).body.data;
    expect(all.backups.map((b) => b.id)).toEqual([backup.id]);

    // And it restores: everything is there.
    const restored = await api.post<{ data: { databaseId: string } }>(
      `/platform/databases/${id}/backups/${backup.id}/restore`,
      {},
    );
    const newId = restored.body.data.databaseId;
    await databaseReads(api, `/platform/databases/${newId}`, 'ready', 300_000);
    const newCreds = (await api.get<{ data: Credentials }>(`/platform/databases/${newId}/connection`)).body.data;
    expect(await BULK[engine].count(h, newId, newCreds)).toBe(held);

    for (const d of [id, newId]) expect((await api.del(`/platform/databases/${d}`)).status).toBe(202);
    for (const d of [id, newId])
      await eventually(
        async () => ((await api.get(`/platform/databases/${d}`)).status === 404 ? true : undefined),
        'the database gone',
        120_000,
      );
  }, 900_000);
});
