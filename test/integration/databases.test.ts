import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';

import { DATABASE_ENGINES, type DatabaseEngine } from '@shared/databases/engines';
import { createDatabaseStore } from '@shared/databases/store';

import { client } from '../helpers/client';
import {
  type BackupBody,
  backupReads,
  type Credentials,
  type DatabaseBody,
  databaseReads,
  ENGINE_DATA,
} from '../helpers/databases';
import { eventually, type Harness, startHarness } from '../helpers/harness';

interface RestoreBody {
  data: { restoreId: string; databaseId: string; safetyBackupId?: string; target: string; database: { id: string } };
}

/**
 * Each engine's backups proven by restoring them, through the api and a real worker: the engine's own dump streamed
 * to the object store with its SHA-256, a restore to a new database holding exactly what the backup held, a restore in
 * place after its safety backup, and a corrupted backup refused with every database left as it was.
 */
describe.each(DATABASE_ENGINES)('%s: backups proven by restoring them', (engine: DatabaseEngine) => {
  let h: Harness;
  let dir: string;
  let api: ReturnType<typeof client>;
  let projectId: string;
  const made: string[] = [];
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), `slipway-databases-${engine}-`));
    h = await startHarness(`databases-${engine}`, { VOLUMES_DIR: dir, RATE_LIMIT_PLATFORM_PER_15MIN: '100000' });
    const org = await h.newOrgWithProject('pro');
    api = client(h, org.token);
    projectId = org.projectId;
  }, 180_000);
  afterAll(async () => {
    // Deleting removes each database's server and storage (its loop-mounted image) with it.
    for (const id of made) await api.del(`/platform/databases/${id}`).catch(() => undefined);
    for (const id of made)
      await eventually(
        async () => ((await api.get(`/platform/databases/${id}`)).status === 404 ? true : undefined),
        `database ${id} gone`,
        120_000,
      ).catch(() => undefined);
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    // Each delete is waited for, one after another: minutes on a loaded machine.
  }, 600_000);

  const connection = async (id: string) =>
    (await api.get<{ data: Credentials }>(`/platform/databases/${id}/connection`)).body.data;
  const data = ENGINE_DATA[engine];

  it('writes → backs up → writes more → restores to a new database with exactly the first data; in place with a safety backup; a corrupt backup refused', async () => {
    const created = await api.post<DatabaseBody>('/platform/databases', {
      projectId,
      engine,
      name: 'main',
      sizeGb: 1,
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    made.push(id);
    await databaseReads(api, `/platform/databases/${id}`);
    const creds = await connection(id);
    await data.write(h, id, creds, ['a', 'b']);

    // The backup: the engine's dump, in the object store, its size and SHA-256 those of the object.
    const backup = await api.post<BackupBody>(`/platform/databases/${id}/backups`);
    expect(backup.status).toBe(202);
    expect(backup.body.data).toMatchObject({ status: 'running', trigger: 'manual' });
    const done = await backupReads(api, `/platform/databases/${id}/backups/${backup.body.data.id}`);
    expect(done.sha256).toMatch(/^[0-9a-f]{64}$/);
    const record = await createDatabaseStore(h.db).backups.getAny(done.id);
    const object = await h.s3.send(new GetObjectCommand({ Bucket: h.config.S3_BUCKET, Key: record!.objectKey }));
    const bytes = Buffer.from(await object.Body!.transformToByteArray());
    expect(bytes.length).toBe(done.sizeBytes);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(done.sha256);

    await data.write(h, id, creds, ['c']);
    expect(await data.read(h, id, creds)).toEqual(['a', 'b', 'c']);

    // To a new database (the default): exactly what the backup held; the original untouched.
    const restored = await api.post<RestoreBody>(`/platform/databases/${id}/backups/${done.id}/restore`, {});
    expect(restored.status).toBe(202);
    expect(restored.body.data.target).toBe('new');
    const newId = restored.body.data.databaseId;
    made.push(newId);
    expect(newId).not.toBe(id);
    const fresh = await databaseReads(api, `/platform/databases/${newId}`);
    expect(fresh).toMatchObject({ kind: 'managed', engine, projectId });
    expect(await data.read(h, newId, await connection(newId))).toEqual(['a', 'b']);
    expect(await data.read(h, id, creds)).toEqual(['a', 'b', 'c']);

    // In place: refused without confirm; with it, a safety backup of a, b, c first, then the backup over the data.
    const unconfirmed = await api.post<{ message: string }>(`/platform/databases/${id}/backups/${done.id}/restore`, {
      target: 'in_place',
    });
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.body.message).toContain('"confirm": true');
    const inPlace = await api.post<RestoreBody>(`/platform/databases/${id}/backups/${done.id}/restore`, {
      target: 'in_place',
      confirm: true,
    });
    expect(inPlace.status).toBe(202);
    const safetyId = inPlace.body.data.safetyBackupId!;
    expect(safetyId).toEqual(expect.any(String));
    const safety = await backupReads(api, `/platform/databases/${id}/backups/${safetyId}`);
    expect(safety.trigger).toBe('safety');
    await eventually(async () => {
      const d = (await api.get<DatabaseBody>(`/platform/databases/${id}`)).body.data;
      if (d.status !== 'ready') return undefined;
      const rows = await data.read(h, id, creds);
      return rows.join() === 'a,b' ? rows : undefined;
    }, 'the database restored in place');
    // The safety backup holds what was replaced.
    const fromSafety = await api.post<RestoreBody>(`/platform/databases/${id}/backups/${safetyId}/restore`, {});
    made.push(fromSafety.body.data.databaseId);
    await databaseReads(api, `/platform/databases/${fromSafety.body.data.databaseId}`);
    expect(
      await data.read(h, fromSafety.body.data.databaseId, await connection(fromSafety.body.data.databaseId)),
    ).toEqual(['a', 'b', 'c']);

    // A corrupted backup: one byte flipped in the object store. The restore fails before touching anything.
    const flipped = Buffer.from(bytes);
    const at = Math.floor(flipped.length / 2);
    flipped.writeUInt8(flipped.readUInt8(at) ^ 0xff, at);
    await h.s3.send(new PutObjectCommand({ Bucket: h.config.S3_BUCKET, Key: record!.objectKey, Body: flipped }));
    const bad = await api.post<RestoreBody>(`/platform/databases/${id}/backups/${done.id}/restore`, {
      target: 'in_place',
      confirm: true,
    });
    expect(bad.status).toBe(202);
    const outcome = await h.temporal.workflow
      .getHandle(`restore/${bad.body.data.restoreId}`)
      .result()
      .catch((err: unknown) => err);
    expect(String((outcome as Error).cause ?? outcome)).toMatch(/is corrupt: the object store holds/);
    expect((await api.get<DatabaseBody>(`/platform/databases/${id}`)).body.data.status).toBe('ready');
    expect(await data.read(h, id, creds)).toEqual(['a', 'b']);
    // No safety backup was taken for a restore that never started: the list holds the two backups only.
    const list = await api.get<{ data: { backups: { id: string }[] } }>(`/platform/databases/${id}/backups`);
    expect(list.body.data.backups.map((b) => b.id).sort()).toEqual([done.id, safetyId].sort());

    // To a new database, the corrupt backup leaves a failed record saying why, and no server.
    const badNew = await api.post<RestoreBody>(`/platform/databases/${id}/backups/${done.id}/restore`, {});
    made.push(badNew.body.data.databaseId);
    const failed = await databaseReads(api, `/platform/databases/${badNew.body.data.databaseId}`, 'failed');
    expect(failed.error).toMatch(/is corrupt/);

    // A backup whose object is gone: refused as missing, the database as it was.
    await h.s3.send(new DeleteObjectCommand({ Bucket: h.config.S3_BUCKET, Key: record!.objectKey }));
    const gone = await api.post<RestoreBody>(`/platform/databases/${id}/backups/${done.id}/restore`, {
      target: 'in_place',
      confirm: true,
    });
    const missing = await h.temporal.workflow
      .getHandle(`restore/${gone.body.data.restoreId}`)
      .result()
      .catch((err: unknown) => err);
    expect(String((missing as Error).cause ?? missing)).toMatch(/is missing from the object store/);
    expect(await data.read(h, id, creds)).toEqual(['a', 'b']);
  }, 900_000);
});
