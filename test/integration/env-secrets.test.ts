import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import type { LogEntry } from '@temporalio/worker';

import { LABELS } from '@shared/constants';
import { PLAN_POLICIES } from '@shared/plans';

import { client } from '../helpers/client';
import { type Harness, quietTemporalRuntime, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

/**
 * Every string in `value`, with bytes read as UTF-8 — payload `data` (base64 in a fetched history, bytes elsewhere),
 * BSON binaries — as a reader of the Temporal UI or the database would see them.
 */
function text(value: unknown): string {
  return JSON.stringify(value, (key, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    if (key === 'data' && typeof v === 'string') return Buffer.from(v, 'base64').toString('utf8');
    return typeof v === 'bigint' ? String(v) : v;
  });
}

/**
 * Files under `dir` whose bytes contain `needle` (the services' own data files: SQLite, WAL, logs). Walked one
 * directory at a time, because the services keep writing while we read: MinIO empties its trash folders, SQLite drops
 * its journals, and a path listed a moment ago may be gone (that is not a finding; a vanished file holds no secret).
 */
async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
    throw err;
  });
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) hits.push(...(await filesContaining(file, needle)));
    else if (entry.isFile() && (await fs.readFile(file).catch(() => Buffer.alloc(0))).includes(needle)) hits.push(file);
  }
  return hits;
}

// Env values are secrets — out of workflow history, sealed at rest, in no response or log line.
describe('deployment env values', () => {
  let h: Harness;
  let image: string;
  const apiLog: string[] = [];
  const workerLog: LogEntry[] = [];

  beforeAll(async () => {
    // Before the harness: every worker and activity log entry of this file is kept.
    quietTemporalRuntime((entry) => workerLog.push(entry));
    h = await startHarness(
      'env-secrets',
      { LOG_LEVEL: 'debug' },
      { logDestination: { write: (line: string) => void apiLog.push(line) } },
    );
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(() => h?.stop());

  const envOf = async (id: string) => {
    const [c] = await h.docker.listContainers({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
    return (await h.docker.getContainer(c!.Id).inspect()).Config.Env;
  };

  it('reach the container and nothing else: not the history, the database, a response or a log line', async () => {
    const { token } = await h.newOrg();
    const api = client(h, token);
    const secret = `s3cret-${randomUUID()}`;
    const other = `other-${randomUUID()}`;

    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image,
      name: 'with-secrets',
      port: 8080,
      envVars: { APP_SECRET: secret, OTHER_VALUE: other },
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.deploymentId;
    const running = await api.waitFor(id, ['running', 'failed']);
    expect(running.status).toBe('running');

    // The container has them.
    expect(await envOf(id)).toEqual(expect.arrayContaining([`APP_SECRET=${secret}`, `OTHER_VALUE=${other}`]));

    // Responses show names only.
    const read = await api.get(`/compat/deployments/${id}`);
    expect(read.body).toMatchObject({ envVarNames: ['APP_SECRET', 'OTHER_VALUE'] });
    const listed = await api.get('/compat/deployments');
    for (const body of [accepted.body, read.body, listed.body]) {
      expect(text(body)).not.toContain(secret);
      expect(text(body)).not.toContain(other);
    }

    // The workflow's history (what the Temporal UI shows) names them and holds no value.
    const workflow = h.temporal.workflow.getHandle(`deployment/${id}`);
    const history = await workflow.fetchHistory();
    expect(text(history)).toContain('APP_SECRET');
    expect(text(history)).not.toContain(secret);
    expect(text(history)).not.toContain(other);

    // The record, read raw: names, and the values sealed (AES-256-GCM), not in the clear.
    const record = await h.db.collection('deployments').findOne({ _id: id as never });
    expect(record).toMatchObject({
      envNames: ['APP_SECRET', 'OTHER_VALUE'],
      envSealed: { iv: expect.any(String), tag: expect.any(String), ciphertext: expect.any(String) },
    });
    expect(record).not.toHaveProperty('envVars');
    expect(text(record)).not.toContain(secret);

    // The services' own files: Temporal's SQLite (history), FerretDB's SQLite (records), their logs.
    const dataDir = process.env.SLIPWAY_TEST_DATA_DIR;
    if (dataDir) expect(await filesContaining(dataDir, secret)).toEqual([]);

    // What the api and the worker logged while deploying.
    expect(apiLog.length).toBeGreaterThan(0);
    expect(apiLog.join('\n')).not.toContain(secret);
    expect(workerLog.length).toBeGreaterThan(0);
    expect(text(workerLog)).not.toContain(secret);

    expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    await workflow.result();
  });

  it('still reach the container of a deployment started the way earlier versions did, and get sealed at rest', async () => {
    const { token, orgId, userId } = await h.newOrg();
    const id = randomUUID();
    const value = `legacy-${randomUUID()}`;
    const now = new Date();
    // The record and the workflow input as the api wrote them before values were passed by reference.
    await h.db.collection('deployments').insertOne({
      _id: id as never,
      orgId,
      createdBy: userId,
      origin: 'compat',
      name: 'legacy',
      provider: 'engine_local',
      source: { type: 'image', image },
      port: 8080,
      envVars: { LEGACY_VALUE: value },
      revision: 1,
      status: 'queued',
      version: 1,
      events: [{ status: 'queued', message: 'deployment accepted', at: now }],
      createdAt: now,
      updatedAt: now,
    });
    await h.temporal.workflow.start('deploymentWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `deployment/${id}`,
      args: [
        {
          deploymentId: id,
          orgId,
          source: { type: 'image', image },
          port: 8080,
          envVars: { LEGACY_VALUE: value },
          revision: 1,
          limits: PLAN_POLICIES.pro.limits,
          readyTimeoutS: 60,
          version: 1,
        },
      ],
    });
    const api = client(h, token);
    expect((await api.waitFor(id, ['running', 'failed'])).status).toBe('running');
    expect(await envOf(id)).toContain(`LEGACY_VALUE=${value}`);
    expect((await api.get(`/compat/deployments/${id}`)).body).toMatchObject({ envVarNames: ['LEGACY_VALUE'] });

    // The reconciler seals what such records still hold in the clear.
    await h.temporal.workflow.execute('reconcileWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `reconcile-env-${randomUUID()}`,
    });
    const record = await h.db.collection('deployments').findOne({ _id: id as never });
    expect(record).toMatchObject({ envNames: ['LEGACY_VALUE'], envSealed: { ciphertext: expect.any(String) } });
    expect(record).not.toHaveProperty('envVars');
    expect(text(record)).not.toContain(value);
    expect((await api.get(`/compat/deployments/${id}`)).body).toMatchObject({ envVarNames: ['LEGACY_VALUE'] });
    expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    await h.temporal.workflow.getHandle(`deployment/${id}`).result();
  });
});
