import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { HeadObjectCommand } from '@aws-sdk/client-s3';

import { LABELS } from '@shared/constants';
import { ensureUploadExpirySchedule } from '@worker/schedules';

import { baseImageEnv } from '../helpers/base-images';
import { client } from '../helpers/client';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { archiveForm, makeZip, rawZip, zipDirectory } from '../helpers/zip';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'sources');
const fixture = (name: string) => path.join(FIXTURES, name);
const TOKEN = 'glpat-private-fixture-token-7f3a';

type Body = Record<string, unknown> & { error?: string; code?: string };
interface Deployment {
  status: string;
  url: string | null;
  error?: { code: string; phase: string; message: string };
  events: { status: string; message: string }[];
}
interface LogLines {
  lines: { stream: string; message: string }[];
}

/**
 * Source deployments end to end: zips and Git repositories (a local smart-HTTP server, git's own http-backend)
 * built by the engine from locally built base images, run, and answering at their url; and every bad input
 * refused with a clear reason and nothing left behind.
 */
describe('deploy from source', () => {
  let h: Harness;
  let git: GitServer;
  let workDir: string;
  const repos: Record<string, string> = {};

  beforeAll(async () => {
    const base = await baseImageEnv();
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-builds-test-'));
    git = await startGitServer();
    repos.node = await git.addRepo('acme/node-app', fixture('node-app'));
    repos.dockerfile = await git.addRepo('acme/dockerfile-app', fixture('dockerfile-app'), {
      extraBranches: { feature: { 'www/index.html': 'hello from the feature branch' } },
    });
    repos.private = await git.addRepo('acme/private-app', fixture('node-app'), { private: { token: TOKEN } });
    h = await startHarness('source', {
      ALLOW_PRIVATE_GIT_HOSTS: 'true',
      ...base,
      BUILD_WORK_DIR: workDir,
      BUILD_MAX_UNCOMPRESSED_BYTES: String(8 * 1024 * 1024),
      BUILD_MAX_ENTRIES: '200',
      UPLOAD_MAX_BYTES: String(1024 * 1024),
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_PLATFORM_PER_15MIN: '10000',
    });
  }, 300_000);
  afterAll(async () => {
    await h?.stop();
    await git?.stop();
    if (workDir) await fs.rm(workDir, { recursive: true, force: true });
  });

  const org = async () => client(h, (await h.newOrg('pro')).token);
  type Api = Awaited<ReturnType<typeof org>>;

  async function upload(api: Api, zip: Buffer, filename = 'source.zip') {
    const r = await api.call<Body & { uploadId: string }>('POST', '/compat/uploads/zip', archiveForm(zip, filename));
    expect(r.status).toBe(201);
    return r.body.uploadId;
  }

  async function deploy(api: Api, body: Record<string, unknown>) {
    const r = await api.post<Body & { deploymentId: string }>('/compat/deploy/source', { name: 'src', ...body });
    expect(r.status).toBe(202);
    return r.body.deploymentId;
  }

  const settle = async (api: Api, id: string) =>
    (await api.waitFor(id, ['running', 'failed'], 240_000)) as unknown as Deployment;

  const logs = async (api: Api, id: string) =>
    (await api.get<LogLines>(`/compat/deployments/${id}/logs?limit=1000`)).body.lines;

  async function answers(url: string | null): Promise<string> {
    expect(url).toMatch(/^http:\/\//);
    return eventually(async () => {
      // Bounded: docker-proxy accepts a connection before the app listens, and that request may never be answered.
      const res = await fetch(url as string, { signal: AbortSignal.timeout(2_000) });
      return res.ok ? res.text() : undefined;
    }, `${url} to answer`);
  }

  /** Nothing of a deployment remains on the engine, in the build scratch space or in the host's cgroups. */
  async function nothingLeftOf(id: string) {
    await eventually(async () => {
      const containers = await h.docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.deploymentId}=${id}`] },
      });
      const images = await h.docker.listImages({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
      const scratch = (await fs.readdir(workDir)).filter((f) => f.startsWith(id));
      // The build's own cgroup (its process limit), where the engine host has one.
      const cgroups = (await fs.readdir('/sys/fs/cgroup/pids/slipway-builds').catch(() => [])).filter((f) =>
        f.startsWith(id),
      );
      return containers.length + images.length + scratch.length + cgroups.length === 0 ? true : undefined;
    }, `nothing left of ${id}`);
  }

  async function expectBuildFailure(api: Api, id: string, reason: RegExp) {
    const d = await settle(api, id);
    expect(d.status).toBe('failed');
    expect(d.error).toMatchObject({ code: 'DEPLOYMENT_FAILED', phase: 'build' });
    expect(d.error?.message).toMatch(reason);
    expect(d.error?.message).not.toContain(TOKEN);
    expect(d.url).toBeNull();
    const lines = await logs(api, id);
    expect(lines.some((l) => l.stream === 'build' && reason.test(l.message))).toBe(true);
    await nothingLeftOf(id);
    return { d, lines };
  }

  describe('builds and runs', () => {
    it('a static site from a zip (wrapped in one top-level folder)', async () => {
      const api = await org();
      const id = await deploy(api, {
        uploadId: await upload(api, await zipDirectory(fixture('static-site'), 'my-site')),
        port: 8080,
      });
      const d = await settle(api, id);
      expect(d.status).toBe('running');
      expect(await answers(d.url)).toContain('slipway static fixture');
      expect(d.events.map((e) => e.status)).toEqual(expect.arrayContaining(['queued', 'building', 'deploying']));
      const lines = await logs(api, id);
      // Build lines come first, then the container's own.
      const firstContainer = lines.findIndex((l) => l.stream === 'stdout' || l.stream === 'stderr');
      const lastBuild = lines.map((l) => l.stream).lastIndexOf('build');
      expect(lastBuild).toBeGreaterThanOrEqual(0);
      if (firstContainer >= 0) expect(lastBuild).toBeLessThan(firstContainer);
      expect(lines.some((l) => /detected a static project/.test(l.message))).toBe(true);
      expect(await api.del(`/compat/deployments/${id}`)).toMatchObject({ status: 204 });
      await nothingLeftOf(id);
    });

    it('a Node app from a zip: install, build script, start script', async () => {
      const api = await org();
      const id = await deploy(api, {
        uploadId: await upload(api, await zipDirectory(fixture('node-app'))),
        port: 8080,
      });
      const d = await settle(api, id);
      expect(d.status).toBe('running');
      const text = await answers(d.url);
      expect(text).toContain('hello from node fixture');
      expect(text).toContain('built by npm run build');
      const lines = await logs(api, id);
      expect(lines.some((l) => l.stream === 'build' && /npm run build/.test(l.message))).toBe(true);

      // The image carries our labels, and `COPY . .` brought the app but not the labelled Dockerfile we built with.
      const image = `slipway/${id}:1`;
      expect((await h.docker.getImage(image).inspect()).Config.Labels).toMatchObject({
        [LABELS.managed]: 'true',
        [LABELS.deploymentId]: id,
        [LABELS.revision]: '1',
      });
      const ls = await h.docker.createContainer({ Image: image, Cmd: ['ls', '-a', '/app'] });
      try {
        await ls.start();
        await ls.wait();
        const files = (await ls.logs({ stdout: true, stderr: true })).toString('utf8');
        expect(files).toMatch(/server\.js/);
        expect(files).not.toMatch(/\.slipway\.Dockerfile/);
      } finally {
        await ls.remove({ force: true });
      }
    });

    it('a Python app from a zip: pip install -r requirements.txt, then app.py', async () => {
      const api = await org();
      const id = await deploy(api, { uploadId: await upload(api, await zipDirectory(fixture('python-app'))) });
      const d = await settle(api, id);
      expect(d.status).toBe('running');
      expect(await answers(d.url)).toBe('hello from python fixture\nPYTHONUNBUFFERED=1\n');
      const lines = await logs(api, id);
      expect(lines.some((l) => l.stream === 'build' && /detected a python project/.test(l.message))).toBe(true);
      expect(
        lines.some((l) => l.stream === 'build' && /pip install --no-cache-dir -r requirements.txt/.test(l.message)),
      ).toBe(true);
    });

    it('a Node app from git, over smart HTTP', async () => {
      const api = await org();
      const d = await settle(api, await deploy(api, { repoUrl: repos.node, port: 8080 }));
      expect(d.status).toBe('running');
      expect(await answers(d.url)).toContain('hello from node fixture');
      expect(d.events.some((e) => /built slipway\/.*commit [0-9a-f]{12}/.test(e.message))).toBe(true);
    });

    it('a Node app from git, over git://', async () => {
      const api = await org();
      const daemon = await git.daemon();
      const d = await settle(api, await deploy(api, { repoUrl: daemon.cloneUrl('acme/node-app'), port: 8080 }));
      expect(d.status).toBe('running');
      expect(await answers(d.url)).toContain('hello from node fixture');
    });

    it('an app with its own Dockerfile from git, on a named branch', async () => {
      const api = await org();
      const main = await settle(api, await deploy(api, { repoUrl: repos.dockerfile, port: 8080 }));
      expect(main.status).toBe('running');
      expect(await answers(main.url)).toContain('hello from a Dockerfile');
      const feature = await settle(
        api,
        await deploy(api, { repoUrl: repos.dockerfile, branch: 'feature', port: 8080 }),
      );
      expect(feature.status).toBe('running');
      expect(await answers(feature.url)).toContain('hello from the feature branch');
    });

    it('a private repository with a token from the vault, which never shows the token', async () => {
      const api = await org();
      const secret = await api.post<{ status: string; data: { id: string; name: string } & Body }>(
        '/platform/secrets',
        { name: 'GITLAB_TOKEN', value: TOKEN, environment: 'PRODUCTION', allowedHosts: ['127.0.0.1'] },
      );
      expect(secret.status).toBe(200);
      expect(JSON.stringify(secret.body)).not.toContain(TOKEN);
      const listed = await api.get('/platform/secrets');
      expect(JSON.stringify(listed.body)).not.toContain(TOKEN);
      const stored = await h.db.collection('secrets').findOne({ _id: secret.body.data.id as never });
      expect(JSON.stringify(stored)).not.toContain(TOKEN);

      const id = await deploy(api, { repoUrl: repos.private, gitTokenSecretId: secret.body.data.id, port: 8080 });
      const d = await settle(api, id);
      expect(d.status).toBe('running');
      expect(await answers(d.url)).toContain('hello from node fixture');
      const record = await api.get(`/compat/deployments/${id}`);
      expect(JSON.stringify(record.body)).not.toContain(TOKEN);
      expect(JSON.stringify(await logs(api, id))).not.toContain(TOKEN);
    });
  });

  describe('refuses bad input with a clear reason, leaving nothing behind', () => {
    it('a zip-slip entry, writing nothing outside the extraction directory', async () => {
      const api = await org();
      // Extraction goes to <workDir>/<build>/src: one `..` per level lands a file in <build>, in workDir, in its parent.
      const names = [1, 2, 3].map((up) => `${'../'.repeat(up)}escaped-${randomBytes(4).toString('hex')}.txt`);
      const zip = rawZip([{ name: 'index.html', data: 'ok' }, ...names.map((name) => ({ name, data: 'owned' }))]);
      const id = await deploy(api, { uploadId: await upload(api, zip) });
      await expectBuildFailure(api, id, /outside|zip-slip|\.\./i);
      // Where each entry would have landed, were it written; the build directory itself is removed after any build,
      // so the first entry is also searched for under workDir while the deploy ran (nothing) and after (nothing).
      const landed = names.map((name) => path.resolve(workDir, `${id}-r1-a1`, 'src', name));
      expect(landed.slice(1).map((f) => path.dirname(f))).toEqual([workDir, path.dirname(workDir)]);
      for (const file of landed) await expect(fs.access(file)).rejects.toThrow();
      const everywhere = await fs.readdir(workDir, { recursive: true });
      expect(everywhere.filter((f) => f.includes('escaped-'))).toEqual([]);
    });

    it('a symlink pointing out of the tree', async () => {
      const api = await org();
      const zip = rawZip([
        { name: 'index.html', data: 'ok' },
        { name: 'passwd', data: '../../../../etc/passwd', symlink: true },
      ]);
      await expectBuildFailure(api, await deploy(api, { uploadId: await upload(api, zip) }), /symlink|link/i);
    });

    it('a repository whose symlink leads out of the clone, never reading through it', async () => {
      const api = await org();
      const repoUrl = await git.addRepo(
        'acme/escaping-link',
        { 'server.js': 'require("http").createServer((q, r) => r.end("x")).listen(8080)' },
        { symlinks: { 'package.json': '/proc/self/environ' } },
      );
      const { d, lines } = await expectBuildFailure(
        api,
        await deploy(api, { repoUrl, port: 8080 }),
        /package\.json is a symlink to "\/proc\/self\/environ", which leads outside the source/,
      );
      // The worker's environment holds SECRETS_KEY: nothing of it may reach the caller.
      for (const text of [JSON.stringify(d), ...lines.map((l) => l.message)]) expect(text).not.toMatch(/SECRETS_KEY/);
    });

    it('a zip bomb (more uncompressed bytes than the cap)', async () => {
      const api = await org();
      const zip = await makeZip({ 'index.html': 'ok', 'zeros.bin': '\0'.repeat(40 * 1024 * 1024) });
      expect(zip.length).toBeLessThan(1024 * 1024);
      await expectBuildFailure(api, await deploy(api, { uploadId: await upload(api, zip) }), /uncompressed|bytes/i);
    });

    it('a corrupt zip, a non-zip and an oversize upload, at upload time, storing nothing', async () => {
      const owner = await h.newOrg('pro');
      const api = client(h, owner.token);
      const truncated = (await makeZip({ 'a.txt': 'x'.repeat(1000) })).subarray(0, 80);
      const corrupt = await api.call<Body>('POST', '/compat/uploads/zip', archiveForm(truncated));
      expect([corrupt.status, corrupt.body.code]).toEqual([400, 'INVALID_REQUEST']);
      expect(corrupt.body.error).toMatch(/not a readable zip/);
      const text = await api.call<Body>('POST', '/compat/uploads/zip', archiveForm(Buffer.from('plain text')));
      expect([text.status, text.body.code]).toEqual([400, 'INVALID_REQUEST']);
      expect(text.body.error).toMatch(/not a zip/);
      const big = await api.call<Body>('POST', '/compat/uploads/zip', archiveForm(Buffer.alloc(5 * 1024 * 1024, 1)));
      expect([big.status, big.body.code]).toEqual([400, 'INVALID_REQUEST']);
      expect(big.body.error).toMatch(/larger than the 1048576-byte limit/);
      expect(await h.db.collection('uploads').countDocuments({ orgId: owner.orgId })).toBe(0);
    });

    it('a repository that does not exist, and a branch that does not exist', async () => {
      const api = await org();
      await expectBuildFailure(api, await deploy(api, { repoUrl: `${git.url}/acme/missing.git` }), /no repository at/);
      await expectBuildFailure(
        api,
        await deploy(api, { repoUrl: repos.node, branch: 'no-such-branch' }),
        /branch "no-such-branch" does not exist/,
      );
    });

    it('a private repository without a token, and with a wrong one', async () => {
      const api = await org();
      await expectBuildFailure(api, await deploy(api, { repoUrl: repos.private }), /needs credentials/);
      const wrong = await api.post<{ data: { id: string } }>('/platform/secrets', {
        name: 'WRONG',
        value: 'not-the-token',
        environment: 'PRODUCTION',
        allowedHosts: ['127.0.0.1'],
      });
      await expectBuildFailure(
        api,
        await deploy(api, { repoUrl: repos.private, gitTokenSecretId: wrong.body.data.id }),
        /refused the token/,
      );
      const unknown = await api.post<Body>('/compat/deploy/source', {
        name: 'x',
        repoUrl: repos.private,
        gitTokenSecretId: '00000000-0000-4000-8000-000000000000',
      });
      expect([unknown.status, unknown.body.code]).toEqual([400, 'INVALID_REQUEST']);
    });

    it('a URL that resolves to a private address, unless ALLOW_PRIVATE_GIT_HOSTS is set', async () => {
      const strict = await startHarness('source-strict', { ALLOW_PRIVATE_GIT_HOSTS: 'false' }, { worker: false });
      try {
        const api = client(strict, (await strict.newOrg('pro')).token);
        for (const repoUrl of [
          repos.node,
          'http://localhost/x.git',
          'https://169.254.169.254/x.git',
          'git://10.1.2.3/x.git',
        ]) {
          const r = await api.post<Body>('/compat/deploy/source', { name: 'x', repoUrl });
          expect([r.status, r.body.code]).toEqual([400, 'INVALID_REQUEST']);
          expect(r.body.error).toMatch(/loopback, private, link-local|does not resolve/);
        }
        const creds = await api.post<Body>('/compat/deploy/source', {
          name: 'x',
          repoUrl: 'https://user:secret@example.com/r.git',
        });
        expect(creds.status).toBe(400);
        expect(creds.body.error).toMatch(/must not carry credentials/);
      } finally {
        await strict.stop();
      }
    });

    it('a failing build, naming the step that failed', async () => {
      const api = await org();
      const id = await deploy(api, { uploadId: await upload(api, await zipDirectory(fixture('failing-build'))) });
      const { lines } = await expectBuildFailure(api, id, /npm run build/);
      expect(lines.some((l) => l.message.includes('compile error: missing semicolon'))).toBe(true);
    });

    it('a destroy during the build stops it and removes everything', async () => {
      const api = await org();
      const id = await deploy(api, { uploadId: await upload(api, await zipDirectory(fixture('slow-build'))) });
      await eventually(
        async () => {
          const lines = await logs(api, id);
          return lines.some((l) => /RUN npm run build/.test(l.message)) ? true : undefined;
        },
        'the slow build step to start',
        120_000,
      );
      expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
      await nothingLeftOf(id);
      // The engine's build container for the step is gone too.
      await eventually(async () => {
        const running = await h.docker.listContainers({ all: true });
        return running.some((c) => c.Command.includes('npm run build')) ? undefined : true;
      }, 'the build container to be removed');
      expect((await api.get(`/compat/deployments/${id}`)).status).toBe(404);
    });
  });

  describe('under tight limits', () => {
    let tight: Harness;
    beforeAll(async () => {
      tight = await startHarness('source-limits', {
        ALLOW_PRIVATE_GIT_HOSTS: 'true',
        BUILD_TIMEOUT_S: '3',
        GIT_MAX_BYTES: String(64 * 1024),
        BUILD_WORK_DIR: workDir,
        BUILD_BASE_IMAGE_NODE: h.config.BUILD_BASE_IMAGE_NODE,
        BUILD_BASE_IMAGE_STATIC: h.config.BUILD_BASE_IMAGE_STATIC,
      });
    });
    afterAll(() => tight?.stop());

    it('stops a build that passes BUILD_TIMEOUT_S, and says so', async () => {
      const api = client(tight, (await tight.newOrg('pro')).token);
      const id = await deploy(api, { uploadId: await upload(api, await zipDirectory(fixture('slow-build'))) });
      await expectBuildFailure(api, id, /took longer than 3 s/);
    });

    it('stops a clone that grows past GIT_MAX_BYTES, and says so', async () => {
      const api = client(tight, (await tight.newOrg('pro')).token);
      const repoUrl = await git.addRepo('acme/too-big', {
        'index.html': 'big',
        'blob.txt': randomBytes(256 * 1024).toString('base64'),
      });
      await expectBuildFailure(api, await deploy(api, { repoUrl }), /larger than the 65536-byte clone limit/);
    });
  });

  it('deletes uploads when they expire, by a Temporal schedule', async () => {
    const short = await startHarness('source-expiry', { UPLOAD_TTL_S: '1' });
    try {
      const api = client(short, (await short.newOrg('pro')).token);
      const uploadId = await upload(api, await makeZip({ 'index.html': 'x' }));
      const record = await short.db.collection('uploads').findOne({ _id: uploadId as never });
      expect(record).not.toBeNull();
      const key = record?.key as string;
      const schedule = await ensureUploadExpirySchedule(short.temporal, { taskQueue: short.taskQueue, everyS: 3600 });
      try {
        await new Promise((r) => setTimeout(r, 1100));
        await schedule.trigger();
        await eventually(async () => {
          const gone = (await short.db.collection('uploads').countDocuments({ _id: uploadId as never })) === 0;
          return gone ? true : undefined;
        }, 'the expired upload record to be deleted');
        await expect(
          short.s3.send(new HeadObjectCommand({ Bucket: short.config.S3_BUCKET, Key: key })),
        ).rejects.toMatchObject({ name: 'NotFound' });
        const d = await api.post<Body>('/compat/deploy/source', { name: 'x', uploadId });
        expect(d.status).toBe(400);
      } finally {
        await schedule.delete();
      }
    } finally {
      await short.stop();
    }
  });
});
