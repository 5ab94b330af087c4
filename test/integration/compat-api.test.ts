import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { LABELS } from '@shared/constants';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage, buildImageOnce } from '../helpers/images';
import { archiveForm, makeZip } from '../helpers/zip';

type Body = Record<string, unknown> & { code?: string; error?: string; details?: Record<string, unknown> };

describe('compatibility API over HTTP (real Temporal, FerretDB, MinIO, Docker)', () => {
  let h: Harness;
  let image: string;
  const containersOf = (deploymentId: string) =>
    h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] } });

  beforeAll(async () => {
    // Polling reads far outrun 60/min; the limits themselves are tested in rate-limits.test.ts.
    h = await startHarness('compat', {
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
      // Deploys of '127.0.0.1:1/…' fail at the pull (nothing listens there); without this the api refuses them.
      ALLOW_PRIVATE_REGISTRIES: 'true',
    });
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(() => h?.stop());

  describe('authentication and authorisation', () => {
    it('refuses a missing, malformed or unknown token with 401 INVALID_TOKEN, in the ErrorResponse shape', async () => {
      for (const headers of [
        {},
        { authorization: 'Bearer nope' },
        { authorization: `Bearer svc_${'a'.repeat(43)}` },
      ] as Record<string, string>[]) {
        const r = await client(h).call<Body>('GET', '/compat/deployments', undefined, headers);
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ error: expect.any(String), code: 'INVALID_TOKEN', details: {} });
      }
    });

    it('refuses a revoked token at once and an expired one with TOKEN_EXPIRED', async () => {
      const org = await h.newOrg();
      const api = client(h, org.token);
      expect((await api.get('/compat/deployments')).status).toBe(200);
      await h.identity.revokeToken(org.tokenId);
      expect((await api.get<Body>('/compat/deployments')).body.code).toBe('INVALID_TOKEN');

      const expired = await h.identity.createToken({
        orgId: org.orgId,
        userId: org.userId,
        name: 'old',
        scopes: ['deployment.read'],
        expiresInS: -1,
      });
      const r = await client(h, expired.token).get<Body>('/compat/deployments');
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('TOKEN_EXPIRED');
    });

    it('answers 403 INSUFFICIENT_SCOPE to a token without the scope, and to a viewer whose token names deployment.create', async () => {
      const org = await h.newOrg();
      const readOnly = await h.identity.createToken({
        orgId: org.orgId,
        userId: org.userId,
        name: 'ro',
        scopes: ['deployment.read'],
      });
      const r1 = await client(h, readOnly.token).post<Body>('/compat/deploy', { image, name: 'x' });
      expect(r1.status).toBe(403);
      expect(r1.body.code).toBe('INSUFFICIENT_SCOPE');

      const viewer = await h.identity.addUser({
        orgId: org.orgId,
        email: `viewer-${randomUUID()}@example.com`,
        role: 'viewer',
      });
      const viewerToken = await h.identity.createToken({
        orgId: org.orgId,
        userId: viewer._id,
        name: 'v',
        scopes: ['deployment.create', 'deployment.read'],
      });
      const r2 = await client(h, viewerToken.token).post<Body>('/compat/deploy', { image, name: 'x' });
      expect(r2.status).toBe(403);
      expect(r2.body.code).toBe('INSUFFICIENT_SCOPE');
      expect((await client(h, viewerToken.token).get('/compat/deployments')).status).toBe(200);
    });
  });

  describe('validation', () => {
    it('lists each zod issue in details for a bad deploy body, and refuses unknown fields', async () => {
      const api = client(h, (await h.newOrg()).token);
      const r = await api.post<Body>('/compat/deploy', {
        image: '',
        name: 'Not_A_Label',
        port: 70000,
        envVars: { '1BAD': 'x' },
      });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('INVALID_REQUEST');
      const paths = [...new Set((r.body.details!.issues as { path: string }[]).map((i) => i.path))].sort();
      expect(paths).toEqual(['envVars.1BAD', 'image', 'name', 'port']);

      const unknown = await api.post<Body>('/compat/deploy', { image, name: 'ok', cpu: 4 });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/cpu/);

      const notJson = await api.call<Body>('POST', '/compat/deploy', '{"image":', {});
      expect(notJson.status).toBe(400);
      expect(notJson.body.code).toBe('INVALID_REQUEST');
    });

    it('refuses env values with NUL or control characters, too many variables and too many bytes', async () => {
      const api = client(h, (await h.newOrg()).token);
      const refused = async (envVars: Record<string, string>, why: RegExp) => {
        const r = await api.post<Body>('/compat/deploy', { image, name: 'env', envVars });
        expect([r.status, r.body.code]).toEqual([400, 'INVALID_REQUEST']);
        expect(r.body.error).toMatch(why);
        expect(JSON.stringify(r.body)).not.toContain('s3cr3t');
      };
      await refused({ A: 's3cr3t\u0000x' }, /control characters/);
      await refused({ A: 's3cr3t\u001b[2J' }, /control characters/);
      await refused({ A: 's3cr3t\u007f' }, /control characters/);
      const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`V${i}`, 'x']));
      await refused(many, /at most 100 variables/);
      await refused({ A: 's3cr3t'.repeat(6000), B: 'x'.repeat(40_000) }, /at most 65536 bytes/);
      await refused({ ['K'.repeat(257)]: 'x' }, /envVars/);
      // Multi-line values (a PEM key) and tabs are ordinary.
      const ok = await api.post<Body>('/compat/deploy', {
        image,
        name: 'env',
        envVars: { PEM: '-----BEGIN KEY-----\nabc\r\ndef\n-----END KEY-----', T: 'a\tb' },
      });
      expect(ok.status).toBe(202);
      expect((await api.del(`/compat/deployments/${String(ok.body.deploymentId)}`)).status).toBe(204);
    });

    it('answers 400 for a malformed UUID and 404 DEPLOYMENT_NOT_FOUND for an unknown one', async () => {
      const api = client(h, (await h.newOrg()).token);
      for (const path of ['/compat/deployments/not-a-uuid', '/compat/deployments/not-a-uuid/logs']) {
        const r = await api.get<Body>(path);
        expect(r.status).toBe(400);
        expect(r.body.code).toBe('INVALID_REQUEST');
      }
      expect((await api.del<Body>('/compat/deployments/xyz')).status).toBe(400);
      const id = randomUUID();
      for (const r of [
        await api.get<Body>(`/compat/deployments/${id}`),
        await api.get<Body>(`/compat/deployments/${id}/logs`),
        await api.del<Body>(`/compat/deployments/${id}`),
      ]) {
        expect(r.status).toBe(404);
        expect(r.body).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND', details: { deploymentId: id } });
      }
    });

    it('refuses list filters out of range', async () => {
      const api = client(h, (await h.newOrg()).token);
      for (const q of ['limit=0', 'limit=101', 'offset=-1', 'status=sleeping', 'provider=cloud_z']) {
        const r = await api.get<Body>(`/compat/deployments?${q}`);
        expect([q, r.status, r.body.code]).toEqual([q, 400, 'INVALID_REQUEST']);
      }
      expect((await api.get<Body>(`/compat/deployments/${randomUUID()}/logs?limit=1001`)).status).toBe(400);
    });
  });

  describe('providers, plans and quotas', () => {
    it('lists all four providers with availability by plan', async () => {
      const r = await client(h, (await h.newOrg('free')).token).get<{
        providers: { id: string; available: boolean; reason?: string }[];
      }>('/compat/providers');
      expect(r.status).toBe(200);
      expect(r.body.providers.map((p) => [p.id, p.available])).toEqual([
        ['engine_local', true],
        ['cloud_a_run', false],
        ['cloud_b_container_apps', false],
        ['cloud_c_ecs_fargate', false],
      ]);
      expect(r.body.providers[1]!.reason).toMatch(/free plan/);
    });

    it('refuses a provider the plan does not allow with 403 PROVIDER_NOT_ALLOWED', async () => {
      const r = await client(h, (await h.newOrg('free')).token).post<Body>('/compat/deploy', {
        image,
        name: 'c',
        provider: 'cloud_a_run',
      });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('PROVIDER_NOT_ALLOWED');
    });

    it('answers 429 QUOTA_EXCEEDED past the free plan’s 3 live deployments, and accepts again after a destroy', async () => {
      const api = client(h, (await h.newOrg('free')).token);
      const ids: string[] = [];
      for (const name of ['q1', 'q2', 'q3']) {
        const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name });
        expect(r.status).toBe(202);
        ids.push(r.body.deploymentId);
      }
      const over = await api.post<Body>('/compat/deploy', { image, name: 'q4' });
      expect(over.status).toBe(429);
      expect(over.body).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { limit: 3, live: 3 } });
      expect((await api.del(`/compat/deployments/${ids[0]}`)).status).toBe(204);
      const again = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'q4' });
      expect(again.status).toBe(202);
      for (const id of [...ids.slice(1), again.body.deploymentId])
        expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    });
  });

  describe('deploy, read, logs, destroy', () => {
    it('runs a real container: status with events, url answering, logs, list, then destroy removes it', async () => {
      const api = client(h, (await h.newOrg()).token);
      const accepted = await api.post<Body>('/compat/deploy', {
        image,
        name: 'web',
        port: 8080,
        envVars: { SECRET_KEY: 'hunter2' },
      });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toEqual({
        deploymentId: expect.any(String),
        status: 'queued',
        provider: 'engine_local',
        statusUrl: `/compat/deployments/${String(accepted.body.deploymentId)}`,
        createdAt: expect.any(String),
      });
      const id = accepted.body.deploymentId as string;
      const running = await api.waitFor(id, ['running', 'failed']);
      expect(running).toMatchObject({
        id,
        name: 'web',
        status: 'running',
        provider: 'engine_local',
        port: 8080,
        envVarNames: ['SECRET_KEY'],
      });
      expect(JSON.stringify(running)).not.toContain('hunter2');
      expect((running.events as { status: string }[]).map((e) => e.status)).toEqual([
        'queued',
        'deploying',
        'deploying',
        'running',
      ]);

      const page = await fetch(running.url as string);
      expect(await page.text()).toBe('hello from slipway\n');

      const logs = await eventually(async () => {
        const r = await api.get<{ lines: { stream: string; message: string }[] }>(
          `/compat/deployments/${id}/logs?limit=50`,
        );
        return r.body.lines?.some((l) => l.message.includes('response:200')) ? r : undefined;
      }, 'the request to appear in the logs');
      expect(logs.status).toBe(200);
      expect(logs.body.lines[0]).toEqual({
        timestamp: expect.any(String),
        stream: expect.stringMatching(/stdout|stderr/),
        message: expect.any(String),
      });
      expect((await api.get<{ lines: unknown[] }>(`/compat/deployments/${id}/logs?limit=1`)).body.lines).toHaveLength(
        1,
      );

      const list = await api.get<{ deployments: { id: string }[]; total: number }>(
        '/compat/deployments?status=running',
      );
      expect(list.body.deployments.map((d) => d.id)).toEqual([id]);
      expect(list.body.total).toBe(1);

      expect((await containersOf(id))[0]!.Labels[LABELS.deploymentId]).toBe(id);
      const destroyed = await api.del(`/compat/deployments/${id}`);
      expect(destroyed.status).toBe(204);
      expect((await api.get<Body>(`/compat/deployments/${id}`)).body.code).toBe('DEPLOYMENT_NOT_FOUND');
      expect((await api.get<Body>(`/compat/deployments/${id}/logs`)).status).toBe(404);
      expect((await api.del<Body>(`/compat/deployments/${id}`)).status).toBe(404);
      await eventually(
        async () => ((await containersOf(id)).length === 0 ? true : undefined),
        'the container to be removed',
      );
    });

    it('fails a deploy whose image cannot be had, with DEPLOYMENT_FAILED and the reason', async () => {
      const api = client(h, (await h.newOrg()).token);
      const r = await api.post<{ deploymentId: string }>('/compat/deploy', {
        image: '127.0.0.1:1/slipway-test/missing:1',
        name: 'missing',
      });
      const failed = await api.waitFor(r.body.deploymentId, ['failed', 'running'], 90_000);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({
        code: 'DEPLOYMENT_FAILED',
        phase: 'pull',
        // Pulled and failed, or refused before any pull (a registry on loopback is a private address).
        message: expect.stringMatching(/could not be pulled|refused/),
      });
      expect(failed.url).toBeNull();
      // The engine's own words (HTTP codes, dial errors) stay in the worker's log.
      expect(JSON.stringify(failed)).not.toMatch(/HTTP code|dial tcp|connection refused|\(HTTP/i);
    });

    it('fails a container the engine refuses to create with a plain message, never the engine’s text', async () => {
      // No CMD: the engine refuses to create a container from it ("No command specified").
      const tag = 'slipway-test/no-command:latest';
      await buildImageOnce(h.docker, tag, async (context) => {
        await fs.writeFile(path.join(context, 'note.txt'), 'no command here\n');
        await fs.writeFile(path.join(context, 'Dockerfile'), 'FROM scratch\nCOPY note.txt /note.txt\n');
      });
      const api = client(h, (await h.newOrg()).token);
      const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image: tag, name: 'nocmd' });
      expect(r.status).toBe(202);
      const failed = await api.waitFor(r.body.deploymentId, ['failed', 'running'], 120_000);
      expect(failed).toMatchObject({
        status: 'failed',
        error: { code: 'DEPLOYMENT_FAILED', phase: 'start', message: expect.stringMatching(/deploy again/) },
      });
      expect(JSON.stringify(failed)).not.toMatch(/No command specified|HTTP code|\(HTTP/i);
    });

    it('keeps organisations apart: another org’s deployment is 404 and absent from its list', async () => {
      const a = client(h, (await h.newOrg()).token);
      const b = client(h, (await h.newOrg()).token);
      const r = await a.post<{ deploymentId: string }>('/compat/deploy', {
        image: '127.0.0.1:1/slipway-test/missing:2',
        name: 'mine',
      });
      expect((await b.get<Body>(`/compat/deployments/${r.body.deploymentId}`)).status).toBe(404);
      expect((await b.get<Body>(`/compat/deployments/${r.body.deploymentId}/logs`)).status).toBe(404);
      expect((await b.del<Body>(`/compat/deployments/${r.body.deploymentId}`)).status).toBe(404);
      expect((await b.get<{ total: number }>('/compat/deployments')).body.total).toBe(0);
      expect((await a.get<{ total: number }>('/compat/deployments')).body.total).toBe(1);
      expect((await a.del(`/compat/deployments/${r.body.deploymentId}`)).status).toBe(204);
    });

    it('pages the list newest first with limit and offset', async () => {
      const api = client(h, (await h.newOrg()).token);
      const ids: string[] = [];
      for (const name of ['p1', 'p2', 'p3']) {
        ids.push(
          (
            await api.post<{ deploymentId: string }>('/compat/deploy', {
              image: '127.0.0.1:1/slipway-test/missing:3',
              name,
            })
          ).body.deploymentId,
        );
      }
      const page = await api.get<{ deployments: { id: string }[]; total: number; limit: number; offset: number }>(
        '/compat/deployments?limit=2&offset=1',
      );
      expect(page.body).toMatchObject({ total: 3, limit: 2, offset: 1 });
      expect(page.body.deployments.map((d) => d.id)).toEqual([ids[1], ids[0]]);
      const defaults = await api.get<{ limit: number; offset: number }>('/compat/deployments');
      expect(defaults.body).toMatchObject({ limit: 20, offset: 0 });
      for (const id of ids) await api.del(`/compat/deployments/${id}`);
    });
  });

  describe('idempotency', () => {
    it('answers concurrent duplicates with one 202 and 409 DUPLICATE_REQUEST naming the deployment, starting one container', async () => {
      const api = client(h, (await h.newOrg()).token);
      const body = { image, name: 'idem', requestId: `req-${randomUUID()}` };
      const results = await Promise.all([1, 2, 3].map(() => api.post<Body>('/compat/deploy', body)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([202, 409, 409]);
      const id = results.find((r) => r.status === 202)!.body.deploymentId as string;
      for (const dup of results.filter((r) => r.status === 409)) {
        expect(dup.body).toMatchObject({ code: 'DUPLICATE_REQUEST', details: { deploymentId: id } });
      }
      await api.waitFor(id, ['running']);
      expect(await containersOf(id)).toHaveLength(1);
      expect((await api.get<{ total: number }>('/compat/deployments')).body.total).toBe(1);

      expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
      const afterDestroy = await api.post<Body>('/compat/deploy', body);
      expect(afterDestroy.status).toBe(409);
      expect(afterDestroy.body.details).toMatchObject({ deploymentId: id });
      await eventually(
        async () => ((await containersOf(id)).length === 0 ? true : undefined),
        'the container to be removed',
      );
    });

    it('scopes a requestId to its organisation', async () => {
      const requestId = `shared-${randomUUID()}`;
      const a = await client(h, (await h.newOrg()).token).post<Body>('/compat/deploy', {
        image: '127.0.0.1:1/slipway-test/missing:4',
        name: 'a',
        requestId,
      });
      const b = await client(h, (await h.newOrg()).token).post<Body>('/compat/deploy', {
        image: '127.0.0.1:1/slipway-test/missing:4',
        name: 'b',
        requestId,
      });
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(a.body.deploymentId).not.toBe(b.body.deploymentId);
    });
  });

  describe('source uploads and source deploys', () => {
    it('stores a zip (201 with size and sha256); a source it cannot build ends failed, saying what to add', async () => {
      const api = client(h, (await h.newOrg()).token);
      const zip = await makeZip({ 'notes/readme.txt': 'nothing to build here' });
      const up = await api.call<Body>('POST', '/compat/uploads/zip', archiveForm(zip));
      expect(up.status).toBe(201);
      expect(up.body).toMatchObject({
        filename: 'site.zip',
        size: zip.length,
        uploadId: expect.any(String),
        expiresAt: expect.any(String),
      });
      expect(up.body.sha256).toMatch(/^[0-9a-f]{64}$/);

      const d = await api.post<{ deploymentId: string }>('/compat/deploy/source', {
        uploadId: up.body.uploadId,
        name: 'site',
      });
      expect(d.status).toBe(202);
      const failed = await api.waitFor(d.body.deploymentId, ['failed', 'running']);
      expect(failed).toMatchObject({
        status: 'failed',
        source: { type: 'upload', uploadId: up.body.uploadId },
        error: { code: 'DEPLOYMENT_FAILED', phase: 'build' },
      });
      const logs = await api.get<{ lines: { stream: string; message: string }[] }>(
        `/compat/deployments/${d.body.deploymentId}/logs`,
      );
      expect(logs.body.lines).toContainEqual(
        expect.objectContaining({ stream: 'build', message: expect.stringMatching(/could not tell how to build/i) }),
      );
      expect(failed).toMatchObject({ error: { message: expect.stringMatching(/add a Dockerfile/) } });
    });

    it('refuses a missing part, a non-zip and a corrupt zip with 400', async () => {
      const api = client(h, (await h.newOrg()).token);
      const missing = await api.call<Body>('POST', '/compat/uploads/zip', new FormData());
      expect([missing.status, missing.body.code]).toEqual([400, 'INVALID_REQUEST']);
      const wrongField = await api.call<Body>(
        'POST',
        '/compat/uploads/zip',
        archiveForm(await makeZip({ a: 'b' }), 'a.zip', 'file'),
      );
      expect(wrongField.status).toBe(400);
      const text = await api.call<Body>('POST', '/compat/uploads/zip', archiveForm(Buffer.from('just text'), 'x.zip'));
      expect(text.status).toBe(400);
      expect(text.body.error).toMatch(/not a zip/);
      const truncated = (await makeZip({ 'a.txt': 'x'.repeat(1000) })).subarray(0, 60);
      const corrupt = await api.call<Body>('POST', '/compat/uploads/zip', archiveForm(truncated, 'c.zip'));
      expect(corrupt.status).toBe(400);
      expect(corrupt.body.error).toMatch(/not a readable zip/);
    });

    it('needs exactly one source, and an uploadId of the caller’s own organisation', async () => {
      const owner = client(h, (await h.newOrg()).token);
      const other = client(h, (await h.newOrg()).token);
      const up = await owner.call<Body>(
        'POST',
        '/compat/uploads/zip',
        archiveForm(await makeZip({ 'index.html': 'x' })),
      );
      const none = await owner.post<Body>('/compat/deploy/source', { name: 's' });
      expect([none.status, none.body.code]).toEqual([400, 'INVALID_REQUEST']);
      const both = await owner.post<Body>('/compat/deploy/source', {
        name: 's',
        uploadId: up.body.uploadId,
        repoUrl: 'https://example.com/r.git',
      });
      expect(both.status).toBe(400);
      const foreign = await other.post<Body>('/compat/deploy/source', { name: 's', uploadId: up.body.uploadId });
      expect(foreign.status).toBe(400);
      expect(foreign.body.error).toMatch(/uploadId .* unknown/);
    });
  });
});
