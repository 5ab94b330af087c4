import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { byteHours, createStorageLedger, type StorageLedgerEntry } from '@shared/usage/storage-ledger';
import { GIB } from '@shared/volumes/mount';

import { client } from '../helpers/client';
import { type BackupBody, backupReads, type DatabaseBody, databaseReads } from '../helpers/databases';
import { eventually, type Harness, startHarness } from '../helpers/harness';

interface VolumeBody {
  data: { id: string; status: string };
}
interface SnapshotList {
  data: { snapshots: BackupBody['data'][] };
}

const HOUR_MS = 3_600_000;

/**
 * The storage ledger as the worker and the api write it: a volume, a database, a backup and a snapshot each leave a
 * start once their storage exists and an end once it is gone, and the period's byte-hours follow from those entries
 * alone, after every record they came from is removed or rewritten.
 */
describe('storage ledger: dated entries of what held bytes, written as storage appears and goes', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-ledger-'));
    h = await startHarness('storage-ledger', { VOLUMES_DIR: dir, RATE_LIMIT_PLATFORM_PER_15MIN: '100000' });
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  const gone = (api: ReturnType<typeof client>, url: string) =>
    eventually(async () => ((await api.get(url)).status === 404 ? true : undefined), `${url} gone`, 180_000);

  it('a volume created then deleted, and a database with a backup and a snapshot, leave their entries', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const ledger = createStorageLedger(h.db);
    const began = new Date();

    // A volume: start when ready, end once its storage is removed.
    const vol = await api.post<VolumeBody>('/platform/volumes', {
      name: 'scratch',
      sizeGb: 1,
      projectId: org.projectId,
    });
    expect(vol.status).toBe(201);
    const volumeId = vol.body.data.id;
    await eventually(async () => {
      const r = await api.get<VolumeBody>(`/platform/volumes/${volumeId}`);
      return r.body.data.status === 'ready' ? true : undefined;
    }, 'the volume ready');
    expect((await api.del(`/platform/volumes/${volumeId}`)).status).toBe(202);
    await gone(api, `/platform/volumes/${volumeId}`);

    // A database, a backup and a snapshot of it; the snapshot deleted through the api, then the database.
    const db = await api.post<DatabaseBody>('/platform/databases', {
      projectId: org.projectId,
      engine: 'redis',
      name: 'cache',
      sizeGb: 1,
    });
    expect(db.status).toBe(201);
    const databaseId = db.body.data.id;
    await databaseReads(api, `/platform/databases/${databaseId}`);
    const backup = await api.post<BackupBody>(`/platform/databases/${databaseId}/backups`);
    const backupDone = await backupReads(api, `/platform/databases/${databaseId}/backups/${backup.body.data.id}`);
    const snapshot = await api.post<BackupBody>(`/platform/databases/${databaseId}/snapshots`);
    expect(snapshot.status).toBe(202);
    const snapshotId = snapshot.body.data.id;
    const snapshotDone = await eventually(async () => {
      const list = await api.get<SnapshotList>(`/platform/databases/${databaseId}/snapshots`);
      return list.body.data.snapshots.find((s) => s.id === snapshotId && s.status === 'complete');
    }, 'the snapshot complete');
    expect((await api.del(`/platform/databases/${databaseId}/snapshots/${snapshotId}`)).status).toBe(204);
    expect((await api.del(`/platform/databases/${databaseId}`)).status).toBe(202);
    await gone(api, `/platform/databases/${databaseId}`);
    const ended = new Date();

    const entries = await ledger.entriesOverlapping(org.orgId, began, new Date(ended.getTime() + 1));
    const byId = new Map(entries.map((e) => [e._id, e]));
    const pair = (kind: string, id: string, bytes: number) => {
      const start = byId.get(`${kind}:${id}:start` as StorageLedgerEntry['_id']);
      const end = byId.get(`${kind}:${id}:end` as StorageLedgerEntry['_id']);
      expect(start).toMatchObject({ orgId: org.orgId, projectId: org.projectId, kind, resourceId: id, bytes });
      expect(end).toMatchObject({ orgId: org.orgId, projectId: org.projectId, kind, resourceId: id, bytes });
      expect(start!.at.getTime()).toBeGreaterThanOrEqual(began.getTime() - 1_000);
      expect(end!.at.getTime()).toBeGreaterThanOrEqual(start!.at.getTime());
      expect(end!.at.getTime()).toBeLessThanOrEqual(ended.getTime() + 1_000);
      return { start: start!, end: end! };
    };
    const volume = pair('volume', volumeId, GIB);
    const database = pair('database', databaseId, GIB);
    const backupEdges = pair('backup', backupDone.id, backupDone.sizeBytes!);
    pair('backup', snapshotId, snapshotDone.sizeBytes!);
    expect(backupDone.sizeBytes).toBeGreaterThan(0);
    // The backup went with its database: its end is dated with the database's storage removal, not before its start.
    expect(backupEdges.end.at.getTime()).toBeLessThanOrEqual(database.end.at.getTime());
    expect(entries).toHaveLength(8);

    // The period's byte-hours, from the entries alone: each resource for exactly the time between its two entries.
    const from = new Date(began.getTime() - HOUR_MS);
    const to = new Date(ended.getTime() + HOUR_MS);
    const hours = byteHours(await ledger.entriesOverlapping(org.orgId, from, to), from, to);
    const volumeHours = hours.find((r) => r.kind === 'volume' && r.resourceId === volumeId);
    expect(volumeHours?.byteHours).toBe((GIB * (volume.end.at.getTime() - volume.start.at.getTime())) / HOUR_MS);
    expect(hours.map((r) => r.resourceId).sort()).toEqual([volumeId, databaseId, backupDone.id, snapshotId].sort());
    // A period wholly before any of it holds nothing, and asking again later gives the same answer.
    expect(await ledger.entriesOverlapping(org.orgId, new Date(began.getTime() - 2 * HOUR_MS), from)).toEqual([]);
    expect(byteHours(await ledger.entriesOverlapping(org.orgId, from, to), from, to)).toEqual(hours);
  }, 600_000);
});
