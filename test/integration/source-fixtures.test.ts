import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import type Docker from 'dockerode';

import { createDockerClient } from '@shared/engine/docker-client';

import { BASE_IMAGES, buildBaseImages } from '../helpers/base-images';
import { type GitServer, startGitServer } from '../helpers/git-server';

const run = promisify(execFile);
const SOURCES = path.resolve(__dirname, '..', 'fixtures', 'sources');
const TOKEN = 'fixture-token';

// The Dockerfiles the source builder generates, as the builder's tests will expect them to work.
const NODE_DOCKERFILE = `FROM ${BASE_IMAGES.node}
WORKDIR /app
COPY . .
RUN npm install --no-audit --no-fund
RUN npm run build
ENV NODE_ENV=production PORT=8080
EXPOSE 8080
CMD ["npm", "start"]
`;
const STATIC_DOCKERFILE = `FROM ${BASE_IMAGES.static}
COPY . /srv/www
EXPOSE 8080
CMD ["busybox","httpd","-f","-v","-p","8080","-h","/srv/www"]
`;

describe('source fixtures: git server and base images (no Slipway service)', () => {
  let git: GitServer;
  let docker: Docker;
  let work: string;
  const tags: string[] = [];
  const containers: string[] = [];

  beforeAll(async () => {
    docker = createDockerClient(process.env.DOCKER_HOST);
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-source-fixtures-'));
    git = await startGitServer();
    await buildBaseImages(docker);
  }, 300_000);
  afterAll(async () => {
    for (const id of containers)
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    for (const tag of tags)
      await docker
        .getImage(tag)
        .remove()
        .catch(() => undefined);
    await git?.stop();
    if (work) await fs.rm(work, { recursive: true, force: true });
  });

  /** `git clone --depth 1` into a fresh directory; never prompts, so a missing credential fails at once. */
  const clone = async (url: string, opts: { branch?: string; token?: string } = {}) => {
    const dir = path.join(work, randomUUID());
    const auth = opts.token
      ? [
          '-c',
          `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${opts.token}`).toString('base64')}`,
        ]
      : [];
    const branch = opts.branch ? ['--branch', opts.branch] : [];
    await run('git', [...auth, 'clone', '-q', '--depth', '1', ...branch, url, dir], {
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
    });
    return dir;
  };

  /** Clones a fixture, builds it with `dockerfile` (or its own), runs it and returns its loopback URL. */
  const deploy = async (fixture: string, dockerfile?: string) => {
    const dir = await clone(await git.addRepo(`${fixture}-${randomUUID().slice(0, 8)}`, path.join(SOURCES, fixture)));
    await fs.rm(path.join(dir, '.git'), { recursive: true, force: true });
    if (dockerfile) await fs.writeFile(path.join(dir, 'Dockerfile'), dockerfile);
    const tag = `slipway-test/source-fixture-${fixture}:${randomUUID().slice(0, 8)}`;
    tags.push(tag);
    await dockerBuild(docker, dir, tag);
    const container = await docker.createContainer({
      Image: tag,
      ExposedPorts: { '8080/tcp': {} },
      HostConfig: { PortBindings: { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] } },
    });
    containers.push(container.id);
    await container.start();
    const port = (await container.inspect()).NetworkSettings.Ports['8080/tcp']?.[0]?.HostPort;
    return `http://127.0.0.1:${port}`;
  };

  it('clones a public repo over smart HTTP', async () => {
    const url = await git.addRepo('acme/static-site', path.join(SOURCES, 'static-site'));
    const dir = await clone(url);
    expect(await fs.readFile(path.join(dir, 'index.html'), 'utf8')).toContain('slipway static fixture');
    expect(await fs.readFile(path.join(dir, 'about', 'index.html'), 'utf8')).toContain('about');
  });

  it('asks for credentials for a private repo and accepts the token as a Basic password', async () => {
    const url = await git.addRepo('acme/private', { 'README.md': 'private\n' }, { private: { token: TOKEN } });
    await expect(clone(url)).rejects.toThrow(/terminal prompts disabled/);
    await expect(clone(url, { token: 'wrong' })).rejects.toThrow(/terminal prompts disabled/);
    const dir = await clone(url, { token: TOKEN });
    expect(await fs.readFile(path.join(dir, 'README.md'), 'utf8')).toBe('private\n');
  });

  it('clones another branch, and fails on a branch or repo that does not exist', async () => {
    const url = await git.addRepo(
      'acme/branches',
      { 'a.txt': 'main\n' },
      { extraBranches: { next: { 'a.txt': 'next\n' } } },
    );
    expect(await fs.readFile(path.join(await clone(url, { branch: 'next' }), 'a.txt'), 'utf8')).toBe('next\n');
    await expect(clone(url, { branch: 'missing' })).rejects.toThrow(/Remote branch missing not found/);
    await expect(clone(`${git.url}/acme/missing.git`)).rejects.toThrow(/not found/);
  });

  it('serves the public repos, not the private ones, over git://', async () => {
    await git.addRepo('acme/over-daemon', { 'a.txt': 'daemon\n' });
    await git.addRepo('acme/private-daemon', { 'a.txt': 'secret\n' }, { private: { token: TOKEN } });
    const daemon = await git.daemon();
    expect(await fs.readFile(path.join(await clone(daemon.cloneUrl('acme/over-daemon')), 'a.txt'), 'utf8')).toBe(
      'daemon\n',
    );
    await expect(clone(daemon.cloneUrl('acme/private-daemon'))).rejects.toThrow(/not exported/);
  });

  it('builds and runs node-app with the generated Dockerfile, offline', async () => {
    const url = await deploy('node-app', NODE_DOCKERFILE);
    const body = await answer(url);
    expect(body).toContain('hello from node fixture');
    expect(body).toContain('built by npm run build');
  });

  it('serves static-site with the generated static Dockerfile', async () => {
    const url = await deploy('static-site', STATIC_DOCKERFILE);
    expect(await answer(url)).toContain('slipway static fixture');
    expect(await answer(`${url}/about/`)).toContain('about the slipway static fixture');
  });

  it('builds dockerfile-app with its own Dockerfile', async () => {
    expect(await answer(await deploy('dockerfile-app'))).toContain('hello from a Dockerfile');
  });

  it('fails failing-build in `npm run build`, quoting its stderr', async () => {
    await expect(deploy('failing-build', NODE_DOCKERFILE)).rejects.toThrow(
      /compile error: missing semicolon[\s\S]*returned a non-zero code: 1/,
    );
  });
});

/**
 * Builds `context` as `tag`; a failed build rejects with the build's own output, after removing the untagged
 * layer it stopped at (the legacy builder keeps it, and nothing else would).
 */
async function dockerBuild(docker: Docker, context: string, tag: string): Promise<void> {
  const stream = await docker.buildImage({ context, src: await fs.readdir(context) }, { t: tag, forcerm: true });
  const output = await new Promise<{ stream?: string; error?: string }[]>((resolve, reject) =>
    docker.modem.followProgress(stream, (err, out: { stream?: string; error?: string }[]) =>
      err ? reject(err) : resolve(out),
    ),
  );
  const failed = output.find((o) => o.error)?.error;
  if (!failed) return;
  const log = output.map((o) => o.stream ?? '').join('');
  const last = [...log.matchAll(/---> ([0-9a-f]{12})/g)].at(-1)?.[1];
  // The first step prints the base image's id: only an untagged layer is this build's own.
  if (last && (await docker.getImage(last).inspect()).RepoTags?.length === 0)
    await docker
      .getImage(last)
      .remove()
      .catch(() => undefined);
  throw new Error(`${log}${failed}`);
}

/** The body of the first 200 from `url`: the server in a just-started container may take a moment to listen. */
async function answer(url: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Bounded: docker-proxy accepts a connection before the app listens, and that request may never be answered.
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch((err: unknown) => err as Error);
    if (!(res instanceof Error) && res.ok) return res.text();
    if (Date.now() > deadline)
      throw new Error(`${url} did not answer: ${res instanceof Error ? res.message : res.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
