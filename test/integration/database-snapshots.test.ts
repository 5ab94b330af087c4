import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { client } from '../helpers/client';
import { type BackupBody, type Credentials, type DatabaseBody, databaseReads, ENGINE_DATA } from '../helpers/databases';
import { eventually, type Harness, startHarness } from '../helpers/harness';

interface RestoreBody {
  data: { restoreId: string; databaseId: string; target: string; database: { kind: string; name: string } };
}

/**
 * Snapshots of a managed database: taken, listed apart from backups, restored as a new managed database, deleted; and
 * a backup deleted on request.
 */
describe('database snapshots', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-db-snapshots-'));
    h = await startHarness('db-snapshots', { VOLUMES_DIR: dir, RATE_LIMIT_PLATFORM_PER_15MIN: '100000' });
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  it('takes a snapshot, restores it as a new managed database with the data, and deletes it; deletes a backup', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const connection = async (id: string) =>
      (await api.get<{ data: Credentials }>(`/platform/databases/${id}/connection`)).body.data;
    const id = (
      await api.post<DatabaseBody>('/platform/databases', {
        projectId: org.projectId,
        engine: 'redis',
        name: 'sessions',
        sizeGb: 1,
      })
    ).body.data.id;
    await databaseReads(api, `/platform/databases/${id}`);
    await ENGINE_DATA.redis.write(h, id, await connection(id), ['x', 'y']);

    const taken = await api.post<BackupBody>(`/platform/databases/${id}/snapshots`);
    expect(taken.status).toBe(202);
    expect(taken.body.data).toMatchObject({ trigger: 'snapshot', status: 'running' });
    const snapshotId = taken.body.data.id;
    // Listed with the snapshots only, never with the backups.
    const listed = await eventually(async () => {
      const r = await api.get<{ data: { snapshots: BackupBody['data'][] } }>(`/platform/databases/${id}/snapshots`);
      const s = r.body.data.snapshots[0];
      return s?.status === 'complete' ? r.body.data.snapshots : undefined;
    }, 'the snapshot complete');
    expect(listed.map((s) => s.id)).toEqual([snapshotId]);
    expect(listed[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    const backups = await api.get<{ data: { backups: unknown[] } }>(`/platform/databases/${id}/backups`);
    expect(backups.body.data.backups).toEqual([]);

    await ENGINE_DATA.redis.write(h, id, await connection(id), ['z']);
    const restored = await api.post<RestoreBody>(`/platform/databases/${id}/snapshots/${snapshotId}/restore`, {
      name: 'sessions-copy',
    });
    expect(restored.status).toBe(202);
    expect(restored.body.data).toMatchObject({ target: 'new', database: { kind: 'managed', name: 'sessions-copy' } });
    const copy = restored.body.data.databaseId;
    await databaseReads(api, `/platform/databases/${copy}`);
    expect(await ENGINE_DATA.redis.read(h, copy, await connection(copy))).toEqual(['x', 'y']);

    // A backup is deleted on request, and only through its own path: a snapshot is not a backup.
    expect((await api.del(`/platform/databases/${id}/backups/${snapshotId}`)).status).toBe(404);
    const backup = await api.post<BackupBody>(`/platform/databases/${id}/backups`);
    expect(backup.status).toBe(202);
    const backupId = backup.body.data.id;
    await eventually(async () => {
      const r = await api.get<BackupBody>(`/platform/databases/${id}/backups/${backupId}`);
      return r.body.data.status === 'complete' ? true : undefined;
    }, 'the backup complete');
    expect((await api.del(`/platform/databases/${id}/backups/${backupId}`)).status).toBe(204);
    const left = await api.get<{ data: { backups: unknown[] } }>(`/platform/databases/${id}/backups`);
    expect(left.body.data.backups).toEqual([]);
    expect((await api.get(`/platform/databases/${id}/backups/${backupId}`)).status).toBe(404);
    expect((await api.del(`/platform/databases/${id}/backups/${backupId}`)).status).toBe(404);

    expect((await api.del(`/platform/databases/${id}/snapshots/${snapshotId}`)).status).toBe(204);
    const after = await api.get<{ data: { snapshots: unknown[] } }>(`/platform/databases/${id}/snapshots`);
    expect(after.body.data.snapshots).toEqual([]);
    expect((await api.del(`/platform/databases/${id}/snapshots/${snapshotId}`)).status).toBe(404);

    for (const d of [id, copy]) expect((await api.del(`/platform/databases/${d}`)).status).toBe(202);
    for (const d of [id, copy])
      await eventually(
        async () => ((await api.get(`/platform/databases/${d}`)).status === 404 ? true : undefined),
        'the database gone',
      );
  }, 300_000);
});
