import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { APP_UID, DEFAULT_BASE_IMAGES } from '@shared/build/base-images';
import { processRegistries } from '@shared/build/registries';
import { LABELS } from '@shared/constants';

import { BASE_IMAGES } from '../helpers/base-images';
import { client } from '../helpers/client';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { everyLayerFile, hostBundleMarks } from '../helpers/image-files';
import { processUids } from '../helpers/processes';
import { archiveForm, makeZip, zipDirectory } from '../helpers/zip';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'sources');

interface Deployment {
  status: string;
  url: string | null;
  error?: { code: string; phase: string; message: string };
}
interface LogLines {
  lines: { stream: string; message: string }[];
}

/** The three apps a new user brings, none with a Dockerfile, each needing a registry during its build. */
const APPS = [
  {
    fixture: 'express-app',
    kind: 'node',
    answer: /^hello from express 4\.\d+\.\d+\n$/,
    log: 'RUN npm ci --no-audit --no-fund',
  },
  {
    fixture: 'flask-app',
    kind: 'python',
    answer: /^hello from flask 3\.1\.\d+\n$/,
    log: 'RUN pip install --no-cache-dir -r requirements.txt',
  },
  { fixture: 'built-site', kind: 'static', answer: /<h1>Slipway built site<\/h1>/, log: 'RUN npm run build' },
] as const;

/**
 * A new user's apps deploy from source on Slipway's own base images (built in global setup, as `npm start` builds
 * them) with the configuration's default base names: dependencies come from the npm registry and PyPI during the
 * build, through the host's CA bundle, and no image we run keeps that bundle.
 */
describe('sample apps deploy from source on the local base images', () => {
  let h: Harness;
  let git: GitServer;
  let api: ReturnType<typeof client>;
  /** Image of each deployment that reached `running`, for the layer inspection. */
  const built: { fixture: string; image: string }[] = [];

  beforeAll(async () => {
    git = await startGitServer();
    h = await startHarness('sample-apps', {
      ALLOW_PRIVATE_GIT_HOSTS: 'true',
      // The configuration's defaults (`latest` of each local base), which global setup's build keeps current.
      BUILD_BASE_IMAGE_NODE: DEFAULT_BASE_IMAGES.node,
      BUILD_BASE_IMAGE_STATIC: DEFAULT_BASE_IMAGES.static,
      BUILD_BASE_IMAGE_PYTHON: DEFAULT_BASE_IMAGES.python,
      RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '10000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
    });
    api = client(h, (await h.newOrg('pro')).token);
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await git?.stop();
  });

  async function upload(zip: Buffer): Promise<string> {
    const r = await api.call<{ uploadId: string }>('POST', '/compat/uploads/zip', archiveForm(zip, 'app.zip'));
    expect(r.status).toBe(201);
    return r.body.uploadId;
  }

  async function deploy(body: Record<string, unknown>): Promise<string> {
    const r = await api.post<{ deploymentId: string }>('/compat/deploy/source', {
      name: 'sample',
      port: 8080,
      ...body,
    });
    expect(r.status).toBe(202);
    return r.body.deploymentId;
  }

  const settle = async (id: string) => (await api.waitFor(id, ['running', 'failed'], 600_000)) as unknown as Deployment;
  const buildLog = async (id: string) =>
    (await api.get<LogLines>(`/compat/deployments/${id}/logs?limit=1000`)).body.lines
      .filter((l) => l.stream === 'build')
      .map((l) => l.message)
      .join('\n');

  const answer = (url: string) =>
    eventually(async () => {
      // Bounded: docker-proxy accepts a connection before the app listens, and that request may never be answered.
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return res.ok ? res.text() : undefined;
    }, `${url} to answer`);

  async function expectRunning(id: string, app: (typeof APPS)[number]) {
    const d = await settle(id);
    const log = await buildLog(id);
    expect({ status: d.status, error: d.error }).toEqual({ status: 'running', error: undefined });
    expect(await answer(d.url!)).toMatch(app.answer);
    // The generated Dockerfile is in the build log, on the configured base.
    expect(log).toContain(`detected a ${app.kind} project`);
    expect(log).toContain(app.log);
    expect(log).toContain(
      `FROM ${app.kind === 'python' ? DEFAULT_BASE_IMAGES.python : DEFAULT_BASE_IMAGES.node} AS build`,
    );
    const images = await h.docker.listImages({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
    expect(images).toHaveLength(1);
    built.push({ fixture: app.fixture, image: images[0]!.Id });
    // Every process of the app runs as the base's unprivileged user.
    expect(new Set(await uidsOf(id))).toEqual(new Set([APP_UID]));
  }

  /** The user IDs of the processes of deployment `id`'s containers. */
  async function uidsOf(id: string): Promise<number[]> {
    const containers = await h.docker.listContainers({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
    expect(containers.length).toBeGreaterThan(0);
    return (await Promise.all(containers.map((c) => processUids(h.docker, c.Id)))).flat();
  }

  describe.each(APPS)('$fixture', (app) => {
    it('deploys from a zip with no Dockerfile, to running, answering at its URL', async () => {
      await expectRunning(
        await deploy({ uploadId: await upload(await zipDirectory(path.join(FIXTURES, app.fixture))) }),
        app,
      );
    }, 660_000);

    it('deploys from a Git repository the same way', async () => {
      const repoUrl = await git.addRepo(
        `samples/${app.fixture}-${randomUUID().slice(0, 8)}`,
        path.join(FIXTURES, app.fixture),
      );
      await expectRunning(await deploy({ repoUrl }), app);
    }, 660_000);
  });

  it("runs a user's own Dockerfile FROM slipway/node, as the user it names (node, as in the official image)", async () => {
    const zip = await makeZip({
      Dockerfile: 'FROM slipway/node\nCOPY server.js .\nUSER node\nCMD ["node", "server.js"]\n',
      'server.js':
        'require("http").createServer((q, r) => r.end(`own Dockerfile on node ${process.version}\\n`)).listen(8080);\n',
    });
    const id = await deploy({ uploadId: await upload(zip) });
    const d = await settle(id);
    expect(d.status).toBe('running');
    expect(await answer(d.url!)).toMatch(/^own Dockerfile on node v20\.\d+\.\d+\n$/);
    expect(new Set(await uidsOf(id))).toEqual(new Set([APP_UID]));
  }, 300_000);

  it("keeps the USER of a user's own Dockerfile: Slipway's own user is for the Dockerfiles it writes", async () => {
    const zip = await makeZip({
      Dockerfile:
        'FROM slipway/static\nCOPY index.html /srv/www/\nUSER 4242:4242\nCMD ["busybox", "httpd", "-f", "-p", "8080", "-h", "/srv/www"]\n',
      'index.html': 'served as 4242',
    });
    const id = await deploy({ uploadId: await upload(zip) });
    const d = await settle(id);
    expect(d.status).toBe('running');
    expect(await answer(d.url!)).toBe('served as 4242');
    expect(new Set(await uidsOf(id))).toEqual(new Set([4242]));
  }, 300_000);

  it('leaves neither the CA bundle nor any build-only file in any layer of the images it runs', async () => {
    expect(built.map((b) => b.fixture).sort()).toEqual([...APPS, ...APPS].map((a) => a.fixture).sort());
    const bundle = processRegistries().caBundle;
    expect(bundle).toBeDefined();
    const marks = await hostBundleMarks(bundle!);
    // Layers shared by several images (the bases') are read once.
    const scanned = new Set<string>();
    const leaks = async (image: string) => {
      const found: string[] = [];
      const { manifestLayers, readLayers } = await everyLayerFile(h.docker, image, scanned, (file) => {
        if (file.path.split('/').includes('.slipway-build')) found.push(`${file.layer}: ${file.path}`);
        if (marks.addedCerts.some((cert) => file.content.includes(cert)))
          found.push(`${file.layer}: ${file.path} (host CA)`);
        if (createHash('sha256').update(file.content).digest('hex') === marks.sha256) {
          found.push(`${file.layer}: ${file.path} (bundle)`);
        }
      });
      expect(readLayers.sort()).toEqual([...manifestLayers].sort());
      const env = (await h.docker.getImage(image).inspect()).Config.Env ?? [];
      for (const v of env)
        if (/^(NODE_EXTRA_CA_CERTS|PIP_CERT|NPM_CONFIG_REGISTRY|PIP_INDEX_URL)=./.test(v)) found.push(`env ${v}`);
      return found;
    };
    for (const { image } of built) expect(await leaks(image)).toEqual([]);

    // The inspection does find the bundle where it is: an image that copies it in is flagged.
    const context = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-leaky-'));
    const tag = `slipway-test/leaky-ca:${randomUUID().slice(0, 8)}`;
    try {
      await fs.copyFile(bundle!, path.join(context, 'ca.pem'));
      await fs.writeFile(path.join(context, 'Dockerfile'), `FROM ${BASE_IMAGES.static}\nCOPY ca.pem /etc/leaked.pem\n`);
      const stream = await h.docker.buildImage({ context, src: ['Dockerfile', 'ca.pem'] }, { t: tag, rm: true });
      await new Promise((resolve, reject) =>
        h.docker.modem.followProgress(stream, (e, r) => (e ? reject(e) : resolve(r))),
      );
      expect(await leaks(tag)).toEqual(expect.arrayContaining([expect.stringMatching(/etc\/leaked\.pem \(bundle\)$/)]));
    } finally {
      await h.docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined);
      await fs.rm(context, { recursive: true, force: true });
    }
  }, 900_000);

  describe('a failed build names the step and says what is wrong in plain words', () => {
    const failing = async (files: Record<string, string>) => {
      const id = await deploy({ uploadId: await upload(await makeZip(files)) });
      const d = await settle(id);
      expect(d.status).toBe('failed');
      expect(d.error).toMatchObject({ code: 'DEPLOYMENT_FAILED', phase: 'build' });
      return { message: d.error!.message, log: await buildLog(id) };
    };

    it('a dependency the npm registry does not have', async () => {
      const { message, log } = await failing({
        'package.json': JSON.stringify({
          scripts: { start: 'node server.js' },
          dependencies: { 'slipway-no-such-pkg-zz': '1.0.0' },
        }),
        'server.js': '',
      });
      expect(message).toBe(
        'the build failed at step "RUN npm install --no-audit --no-fund": the dependency "slipway-no-such-pkg-zz" was not found in the npm registry; check its name in package.json (and package-lock.json)',
      );
      // The raw text is in the build log only.
      expect(log).toMatch(/npm ERR! 404/);
    }, 300_000);

    it('a dependency one typo from the name the code requires: named as likely misspelt', async () => {
      const { message } = await failing({
        'package.json': JSON.stringify({
          scripts: { start: 'node server.js' },
          dependencies: { 'slipway-no-such-helpr-zz': '1.0.0' },
        }),
        'server.js': "require('slipway-no-such-helper-zz');\n",
      });
      expect(message).toBe(
        'the build failed at step "RUN npm install --no-audit --no-fund": the dependency "slipway-no-such-helpr-zz" was not found in the npm registry (did you mean "slipway-no-such-helper-zz"? the source uses that name); check its name in package.json (and package-lock.json)',
      );
    }, 300_000);

    it('a dependency PyPI does not have', async () => {
      const { message, log } = await failing({ 'requirements.txt': 'slipway-no-such-dist-zz\n', 'app.py': '' });
      expect(message).toBe(
        'the build failed at step "RUN pip install --no-cache-dir -r requirements.txt": the dependency "slipway-no-such-dist-zz" was not found in the Python package index; check its name in requirements.txt',
      );
      expect(log).toMatch(/ERROR: No matching distribution found for slipway-no-such-dist-zz/);
    }, 300_000);

    it('a syntax error in package.json, and a Node app with nothing to start', async () => {
      let { message } = await failing({ 'package.json': '{\n  "name": "x"\n  "scripts": { "start": "node ." }\n}\n' });
      expect(message).toMatch(/^package\.json is not valid JSON at line 3, column 3 \(.+\); fix it and deploy again$/);
      ({ message } = await failing({ 'package.json': '{"name": "x"}', 'lib.js': '' }));
      expect(message).toMatch(
        /^package\.json has no "start" script.*add a "start" script, e\.g\. "start": "node server\.js"$/,
      );
    }, 300_000);
  });
});
