import fs from 'node:fs/promises';
import path from 'node:path';

import { BASE_IMAGES } from '../helpers/base-images';
import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage, buildImageOnce } from '../helpers/images';
import { archiveForm, makeZip } from '../helpers/zip';

type Failed = {
  status: string;
  error?: { code: string; phase: string; message: string; exitCode?: number; lastLines?: string[]; hint: string };
};

/** A busybox image whose entrypoint is `sh -c <script>`. */
async function shImage(h: Harness, name: string, script: string) {
  const tag = `slipway-test/hint-${name}:1`;
  await buildImageOnce(h.docker, tag, async (context) => {
    await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
    await fs.mkdir(path.join(context, 'www'));
    await fs.writeFile(path.join(context, 'www', 'index.html'), 'hi');
    await fs.writeFile(
      path.join(context, 'Dockerfile'),
      `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nENTRYPOINT ["/bin/busybox", "sh", "-c", ${JSON.stringify(script)}]\n`,
    );
  });
  return tag;
}

/** Each cause of the hint table (shared/deployments/hints.ts), met by a real container that fails that way. */
describe('a failed deployment says what to do, cause by cause', () => {
  let h: Harness;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await startHarness('failure-hints', {
      // A port that never opens is given up on quickly here; the default is minutes.
      DEPLOY_READY_TIMEOUT_S: '8',
      // Deploys of '127.0.0.1:1/…' fail at the pull (nothing listens there); without this the api refuses them.
      ALLOW_PRIVATE_REGISTRIES: 'true',
    });
    api = client(h, (await h.newOrg()).token);
  });
  afterAll(() => h?.stop());

  const failedDeploy = async (body: Record<string, unknown>, path = '/compat/deploy') => {
    const r = await api.post<{ deploymentId: string }>(path, { name: 'hinted', ...body });
    expect(r.status).toBe(202);
    const d = (await api.get<Failed>(`/compat/deployments/${r.body.deploymentId}?wait=failed&timeout=120`)).body;
    expect(d.status).toBe('failed');
    return d.error!;
  };

  it('the app exited: its exit code and last lines', async () => {
    const e = await failedDeploy({ image: await buildFixtureImage(h.docker, 'crash'), port: 8080 });
    expect(e).toMatchObject({ code: 'DEPLOYMENT_FAILED', exitCode: 3 });
    expect(e.lastLines).toContain('boom: missing DATABASE_URL');
    expect(e.hint).toMatch(/exited with code 3/);
  });

  it('the app listens on another port than the deployment says', async () => {
    const e = await failedDeploy({ image: await buildFixtureImage(h.docker, 'hello'), port: 3000 });
    expect(e.phase).toBe('ready');
    expect(e.hint).toMatch(/listens on port 8080, but the deployment says 3000/);
  });

  it('the app listens on 127.0.0.1 only', async () => {
    const image = await shImage(h, 'loopback', 'exec /bin/busybox httpd -f -p 127.0.0.1:8080 -h /www');
    const e = await failedDeploy({ image, port: 8080 });
    expect(e.hint).toMatch(/127\.0\.0\.1:8080 only.*0\.0\.0\.0:8080/);
  });

  it('nothing ever listens', async () => {
    const image = await shImage(h, 'silent', 'exec /bin/busybox sleep 3600');
    const e = await failedDeploy({ image, port: 8080 });
    expect(e.hint).toMatch(/Nothing listened on port 8080/);
  });

  it('the app ran out of memory: the limit it met', async () => {
    // Off-heap buffers grow the process until the cgroup's limit kills it.
    const image = `${BASE_IMAGES.node}`;
    const tag = 'slipway-test/hint-oom:1';
    await buildImageOnce(h.docker, tag, async (context) => {
      await fs.writeFile(
        path.join(context, 'Dockerfile'),
        `FROM ${image}\nCMD ["node", "-e", "const a=[]; for(;;) a.push(Buffer.alloc(16*1024*1024, 1))"]\n`,
      );
    });
    const e = await failedDeploy({ image: tag, port: 8080 });
    expect(e.hint).toMatch(/ran out of memory and was killed at the plan’s limit of \d+ MB/);
  });

  it('the image is not there and no registry answers: which registry could not be reached', async () => {
    const e = await failedDeploy({ image: '127.0.0.1:1/slipway-none/app:1', port: 8080 });
    expect(e.phase).toBe('pull');
    expect(e.message).toMatch(/the registry 127\.0\.0\.1:1 could not be reached \(it refused the connection\)/);
    expect(e.message).not.toMatch(/was not found|check the repository, tag or digest/i);
    expect(e.hint).toMatch(/^The registry 127\.0\.0\.1:1 could not be reached from the engine/);
  });

  it.each([
    [
      'node',
      "require('express')",
      /needs the package "express", which is not installed: add it to "dependencies" in package.json/,
    ],
    [
      'python',
      'import flask',
      /imports the module "flask", which is not installed: add the package that provides it to requirements\.txt/,
    ],
  ] as const)('the %s app cannot load a module it needs: add it to the dependencies', async (stack, code, hint) => {
    const tag = `slipway-test/hint-module-${stack}:1`;
    const cmd = stack === 'node' ? ['node', '-e', code] : ['python3', '-c', code];
    await buildImageOnce(h.docker, tag, async (context) => {
      await fs.writeFile(path.join(context, 'Dockerfile'), `FROM ${BASE_IMAGES[stack]}\nCMD ${JSON.stringify(cmd)}\n`);
    });
    const e = await failedDeploy({ image: tag, port: 8080 });
    expect(e.exitCode).toBe(1);
    expect(e.hint).toMatch(hint);
    // One run's lines, however many times it crashed before the diagnosis.
    const named = e.lastLines!.filter((l) => /Cannot find module 'express'|No module named 'flask'/.test(l));
    expect(named).toHaveLength(1);
  });

  it('the build failed: which step, and where to read why', async () => {
    const form = archiveForm(
      await makeZip({
        'package.json': JSON.stringify({
          scripts: { start: 'node s.js' },
          dependencies: { 'slipway-no-such-pkg-zz': '1.0.0' },
        }),
        's.js': '',
      }),
    );
    const uploaded = await api.call<{ uploadId: string }>('POST', '/compat/uploads/zip', form);
    const e = await failedDeploy({ uploadId: uploaded.body.uploadId, port: 8080 }, '/compat/deploy/source');
    expect(e.phase).toBe('build');
    expect(e.message).toMatch(/step "RUN npm install/);
    expect(e.hint).toMatch(/build log/);
  });
});
