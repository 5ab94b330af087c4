import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { DEFAULT_BASE_IMAGES } from '@shared/build/base-images';
import { LABELS } from '@shared/constants';

import { client } from '../helpers/client';
import { type DatabaseBody, databaseReads } from '../helpers/databases';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { archiveForm, zipDirectory } from '../helpers/zip';

const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples', 'node-postgres');

interface Status {
  data: { status: string; revision: number; url: string | null; envVarNames: string[] };
}
interface Created {
  data: { database: DatabaseBody['data']; envName: string; release: { command: { url: string } } };
}

/**
 * The README's example: a small Node app using `pg`, deployed from source, given a PostgreSQL database beside it (its
 * URL reaching the app's env as a new release), stores rows, and still has them after another release.
 */
describe('a deployed app with its database', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-db-app-'));
    h = await startHarness('db-app', {
      VOLUMES_DIR: dir,
      BUILD_BASE_IMAGE_NODE: DEFAULT_BASE_IMAGES.node,
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
    });
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  it('stores rows in its database and still has them after a new release', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const uploaded = await api.call<{ uploadId: string }>(
      'POST',
      '/compat/uploads/zip',
      archiveForm(await zipDirectory(EXAMPLE), 'notes.zip'),
    );
    expect(uploaded.status).toBe(201);
    const deployed = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: 'notes',
      uploadId: uploaded.body.uploadId,
      port: 8080,
      envVars: { RELEASE: 'one' },
    });
    expect(deployed.status).toBe(202);
    const id = deployed.body.data.deployment.id;
    const status = async () => (await api.get<Status>(`/platform/deployments/${id}`)).body.data;
    // Without DATABASE_URL the app exits at once: the first deploy fails, saying so in its logs.
    await eventually(
      async () => (['failed', 'running'].includes((await status()).status) ? true : undefined),
      'the first deploy',
      600_000,
    );

    const created = await api.post<Created>(`/platform/deployments/${id}/databases`, { engine: 'postgresql' });
    expect(created.status).toBe(201);
    expect(created.body.data.envName).toBe('DATABASE_URL');
    expect(created.body.data.database).toMatchObject({ kind: 'service', engine: 'postgresql', deploymentId: id });
    const dbId = created.body.data.database.id;
    await databaseReads(api, `/platform/deployments/${id}/databases/${dbId}`);
    const running = await eventually(
      async () => {
        const s = await status();
        return s.status === 'running' && s.envVarNames.includes('DATABASE_URL') ? s : undefined;
      },
      'the release with DATABASE_URL serving',
      300_000,
    );
    // Sealed like every env value: the record shows the name, the container alone has the value.
    expect(JSON.stringify(running)).not.toMatch(/postgresql:\/\//);

    const url = running.url!;
    const fetchOk = (u: string, init?: RequestInit) =>
      eventually(async () => {
        const r = await fetch(u, { ...init, signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
        return r && r.status < 300 ? r.json() : undefined;
      }, `${u} to answer`);
    for (const note of ['first', 'second', 'third']) await fetchOk(`${url}/notes`, { method: 'POST', body: note });
    expect(await fetchOk(`${url}/notes`)).toEqual(['first', 'second', 'third']);

    // A new release (an env change): the rows are still there.
    const patch = await api.call<{ data: { command: { url: string } } }>('PATCH', `/platform/deployments/${id}/env`, {
      set: { RELEASE: 'two' },
    });
    expect(patch.status).toBe(202);
    await eventually(
      async () => {
        const s = await status();
        return s.status === 'running' && s.revision > running.revision ? s : undefined;
      },
      'the new release serving',
      300_000,
    );
    expect(await fetchOk(`${url}/`)).toEqual({ release: 'two', notes: 3 });
    expect(await fetchOk(`${url}/notes`)).toEqual(['first', 'second', 'third']);
    const [c] = await h.docker.listContainers({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
    const env = (await h.docker.getContainer(c!.Id).inspect()).Config.Env ?? [];
    expect(env.find((e) => e.startsWith('DATABASE_URL='))).toMatch(
      new RegExp(`^DATABASE_URL=postgresql://app:[^@]+@db-${dbId}:5432/app$`),
    );

    // Destroying the deployment destroys its database (keepDatabases=false by default).
    expect((await api.del(`/platform/deployments/${id}`)).status).toBeLessThan(300);
    await eventually(
      async () => ((await api.get(`/platform/databases/${dbId}`)).status === 404 ? true : undefined),
      'the database gone with its deployment',
      180_000,
    );
  }, 1_200_000);

  /** The environment a deployment's serving container runs with, as the engine holds it. */
  async function containerEnv(id: string): Promise<Record<string, string>> {
    const [c] = await h.docker.listContainers({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
    const env = (await h.docker.getContainer(c!.Id).inspect()).Config.Env ?? [];
    return Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  }

  it('links a managed database to deployments of its project, refuses its delete while linked, and keeps a service database when asked', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const image = await buildFixtureImage(h.docker, 'env-hello');
    const deploy = async (name: string) => {
      const r = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
        image,
        name,
        port: 8080,
        projectId: org.projectId,
      });
      expect(r.status).toBe(202);
      return r.body.data.deployment.id;
    };
    const revisionOf = async (id: string) => (await api.get<Status>(`/platform/deployments/${id}`)).body.data;
    const nextRelease = (id: string, after: number) =>
      eventually(
        async () => {
          const s = await revisionOf(id);
          return s.status === 'running' && s.revision > after ? s : undefined;
        },
        `a new release of ${id} serving`,
        300_000,
      );
    const web = await deploy('web');
    const worker = await deploy('worker');
    const first = await nextRelease(web, 0);
    await nextRelease(worker, 0);

    const cache = (
      await api.post<DatabaseBody>('/platform/databases', {
        projectId: org.projectId,
        engine: 'redis',
        name: 'cache',
        sizeGb: 1,
      })
    ).body.data.id;
    const linked = await api.post<{ data: { envName: string } }>(`/platform/databases/${cache}/links`, {
      deploymentId: web,
    });
    expect(linked.status).toBe(202);
    expect(linked.body.data.envName).toBe('REDIS_URL');
    const second = await nextRelease(web, first.revision);
    expect((await containerEnv(web)).REDIS_URL).toMatch(new RegExp(`^redis://default:[^@]+@db-${cache}:6379/0$`));
    const asQueue = await api.post(`/platform/databases/${cache}/links`, {
      deploymentId: worker,
      envName: 'QUEUE_URL',
    });
    expect(asQueue.status).toBe(202);
    await nextRelease(worker, 1);
    expect((await containerEnv(worker)).QUEUE_URL).toBe((await containerEnv(web)).REDIS_URL);
    expect(
      (await api.get<{ data: { links: unknown[] } }>(`/platform/databases/${cache}/links`)).body.data.links,
    ).toEqual([
      ...[
        { deploymentId: web, envName: 'REDIS_URL' },
        { deploymentId: worker, envName: 'QUEUE_URL' },
      ].sort((a, b) => (a.deploymentId < b.deploymentId ? -1 : 1)),
    ]);

    // A name the deployment already has as a plain variable is refused; so is deleting a linked database.
    const clash = await api.post<{ message: string }>(`/platform/databases/${cache}/links`, {
      deploymentId: web,
      envName: 'REDIS_URL',
    });
    expect(clash.status).toBe(409);
    const refused = await api.del<{ message: string }>(`/platform/databases/${cache}`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain(`deployment ${web} (as REDIS_URL)`);

    // Unlinking ships a release without the variable.
    expect((await api.del(`/platform/databases/${cache}/links/${web}`)).status).toBe(202);
    await nextRelease(web, second.revision);
    expect((await containerEnv(web)).REDIS_URL).toBeUndefined();
    expect((await api.del(`/platform/databases/${cache}/links/${worker}`)).status).toBe(202);

    // A service database kept when its deployment is destroyed: a managed database of the project from then on.
    const service = await api.post<Created>(`/platform/deployments/${web}/databases`, {
      engine: 'redis',
      name: 'sessions',
    });
    expect(service.status).toBe(201);
    const sessions = service.body.data.database.id;
    await databaseReads(api, `/platform/databases/${sessions}`);
    expect((await api.del(`/platform/deployments/${web}?keepDatabases=true`)).status).toBe(204);
    const kept = await eventually(
      async () => {
        const d = (await api.get<DatabaseBody>(`/platform/databases/${sessions}`)).body.data;
        return d.kind === 'managed' ? d : undefined;
      },
      'the kept database managed',
      180_000,
    );
    expect(kept).toMatchObject({ deploymentId: null, projectId: org.projectId, status: 'ready' });

    for (const id of [cache, sessions]) expect((await api.del(`/platform/databases/${id}`)).status).toBe(202);
    for (const id of [cache, sessions])
      await eventually(
        async () => ((await api.get(`/platform/databases/${id}`)).status === 404 ? true : undefined),
        'the database gone',
        180_000,
      );
    await api.del(`/platform/deployments/${worker}`);
  }, 1_200_000);
});
