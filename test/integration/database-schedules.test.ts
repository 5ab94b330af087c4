import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { TestWorkflowEnvironment } from '@temporalio/testing';

import { createEngineVolumes } from '@activities/providers/engine-volumes';
import {
  backupScheduleId,
  DATABASE_WORKFLOW,
  databaseWorkflowId,
  SCHEDULED_BACKUP_WORKFLOW,
  type ScheduledBackupInput,
} from '@shared/contracts/database';
import { createCredentialSealer } from '@shared/databases/credentials';
import { DATABASE_ENGINES, databaseHost, ENGINE_PORT, generateCredentials } from '@shared/databases/engines';
import { createDatabaseStore } from '@shared/databases/store';
import { instanceId } from '@shared/instance';

import { client } from '../helpers/client';
import { type BackupBody, databaseReads } from '../helpers/databases';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { startTimeSkipping } from '../helpers/time-skipping';

interface ScheduleBody {
  data: { cron: string; timezone: string; retain: { count?: number; days?: number }; nextRunAt: string | null };
}
interface Backups {
  data: { backups: BackupBody['data'][] };
}

/** Backup schedules as Temporal Schedules, through the api and a real worker on the dev server. */
describe('database backup schedules', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-db-schedules-'));
    h = await startHarness('db-schedules', { VOLUMES_DIR: dir, RATE_LIMIT_PLATFORM_PER_15MIN: '100000' });
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  it('sets a schedule, runs it, keeps what retain says (never a manual backup), and removes it', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const id = (
      await api.post<{ data: { id: string } }>('/platform/databases', {
        projectId: org.projectId,
        engine: 'redis',
        name: 'cache',
        sizeGb: 1,
      })
    ).body.data.id;
    await databaseReads(api, `/platform/databases/${id}`);
    const base = `/platform/databases/${id}`;

    expect((await api.get(`${base}/backup-schedule`)).status).toBe(404);
    const badCron = await api.call<{ message: string }>('PUT', `${base}/backup-schedule`, { cron: 'every day at 3' });
    expect(badCron.status).toBe(400);
    const badZone = await api.call('PUT', `${base}/backup-schedule`, { cron: '0 3 * * *', timezone: 'Mars/Olympus' });
    expect(badZone.status).toBe(400);

    const put = await api.call<ScheduleBody>('PUT', `${base}/backup-schedule`, {
      cron: '0 3 * * *',
      timezone: 'Europe/Paris',
      retain: { count: 1 },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ cron: '0 3 * * *', timezone: 'Europe/Paris', retain: { count: 1 } });
    // Three in the morning in Paris is 01:00 or 02:00 UTC.
    expect(new Date(put.body.data.nextRunAt!).getUTCHours()).toBeLessThanOrEqual(2);
    expect((await api.get<ScheduleBody>(`${base}/backup-schedule`)).body.data.cron).toBe('0 3 * * *');

    const manual = (await api.post<BackupBody>(`${base}/backups`)).body.data.id;
    const handle = h.temporal.schedule.getHandle(backupScheduleId(id));
    const scheduled = async (n: number) =>
      eventually(async () => {
        const all = (await api.get<Backups>(`${base}/backups?limit=100`)).body.data.backups;
        const runs = (await handle.describe()).info.recentActions.length;
        return runs >= n && all.every((b) => b.status !== 'running') ? all : undefined;
      }, `${n} scheduled runs finished`);
    await handle.trigger();
    const first = (await scheduled(1)).filter((b) => b.trigger === 'schedule');
    expect(first).toHaveLength(1);
    await handle.trigger();
    const after = await eventually(async () => {
      const all = await scheduled(2);
      const mine = all.filter((b) => b.trigger === 'schedule');
      return mine.length === 1 && mine[0]!.id !== first[0]!.id ? all : undefined;
    }, 'retention to keep only the newest scheduled backup');
    expect(after.map((b) => b.id)).toContain(manual);
    expect(after.filter((b) => b.trigger === 'schedule')).toHaveLength(1);

    expect((await api.del(`${base}/backup-schedule`)).status).toBe(204);
    expect((await api.get(`${base}/backup-schedule`)).status).toBe(404);
    expect((await api.del(base)).status).toBe(202);
    await eventually(async () => ((await api.get(base)).status === 404 ? true : undefined), 'the database gone');
  }, 600_000);
});

/**
 * What a schedule starts each time it fires, across days of workflow time on the time-skipping test server (which has
 * no Schedules of its own): retention removes the schedule's backups past `retain`, and a run whose backup failed
 * removes nothing, so the newest good backup stays however old it grows.
 */
describe.each(DATABASE_ENGINES)('%s: scheduled backups under time-skipping', (engine) => {
  let env: TestWorkflowEnvironment;
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    env = await startTimeSkipping();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-db-skip-'));
    h = await startHarness(`db-skip-${engine}`, { TEMPORAL_ADDRESS: env.address, VOLUMES_DIR: dir });
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await env?.teardown();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  it('keeps the newest good backup through failed runs, and retires it only once a newer one is good', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    // Recorded and started here rather than through the api: the test server knows no custom search attributes,
    // which the api's start sets for the Temporal UI.
    const id = randomUUID();
    const store = createDatabaseStore(h.db);
    const now = new Date();
    await store.insert({
      _id: id,
      orgId: org.orgId,
      projectId: org.projectId,
      kind: 'managed',
      deploymentId: null,
      engine,
      name: 'app',
      nameKey: `${org.orgId}/managed/app`,
      sizeGb: 1,
      volumeId: randomUUID(),
      host: databaseHost(id),
      port: ENGINE_PORT[engine],
      credentialsSealed: createCredentialSealer(h.config.SECRETS_KEY).seal(
        { _id: id, orgId: org.orgId },
        generateCredentials(engine),
      ),
      status: 'creating',
      error: null,
      createdBy: org.userId,
      createdAt: now,
      updatedAt: now,
    });
    const record = (await store.getAny(id))!;
    await env.client.workflow.start(DATABASE_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: databaseWorkflowId(id),
      args: [{ databaseId: id, orgId: org.orgId, engine, sizeGb: 1, volumeId: record.volumeId }],
    });
    await databaseReads(api, `/platform/databases/${id}`);
    const input: ScheduledBackupInput = { databaseId: id, orgId: org.orgId, retain: { days: 1 } };
    let n = 0;
    const run = () =>
      env.client.workflow.execute(SCHEDULED_BACKUP_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: `scheduled-backup/${id}-${++n}`,
        args: [input],
      }) as Promise<{ backupId: string; removed: string[] }>;
    const backups = store.backups;
    const complete = async () => (await backups.complete(id)).map((b) => b._id);

    const first = await run();
    expect(first.removed).toEqual([]);
    await env.sleep('3 days');

    // The server down: the run's backup fails, and retention, which would retire the 3-day-old backup, does not run.
    const server = h.docker.getContainer(`slipway-db-${id}`);
    await server.stop();
    await expect(run()).rejects.toThrow();
    expect(await complete()).toEqual([first.backupId]);
    await env.sleep('3 days');
    await expect(run()).rejects.toThrow();
    expect(await complete()).toEqual([first.backupId]);

    // Back up: a good backup, and only now is the first, six days old, retired.
    await server.start();
    await env.sleep('1 minute');
    const third = await eventually(async () => run().catch(() => undefined), 'a run once the server is back', 120_000);
    expect(third.removed).toEqual([first.backupId]);
    expect(await complete()).toEqual([third.backupId]);
    expect((await backups.getAny(first.backupId))!.status).toBe('deleted');

    // The database's own workflow waits without a timer, so the test server has skipped it past its run timeout:
    // its server and storage are removed here instead.
    await server.remove({ force: true });
    await createEngineVolumes({ docker: h.docker, instance: instanceId(h.config), dir }).remove(record.volumeId);
    await store.remove(id);
  }, 600_000);
});
