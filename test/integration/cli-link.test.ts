import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { apiProxy } from '../helpers/api-proxy';
import { cliUser } from '../helpers/cli-runner';
import { client } from '../helpers/client';
import { edgeAgent, edgeGet } from '../helpers/edge';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

const ROOT = path.resolve(__dirname, '..', '..');
const SITE = path.join(ROOT, 'test', 'fixtures', 'sources', 'static-site');

/**
 * The developer's loop on the real stack: the first `slipway deploy` in a folder creates the app and links the folder
 * to it; every later one ships a release of the same deployment; the other commands act on the link.
 */
describe('slipway deploy, link and the commands on a linked folder', () => {
  let h: Harness;
  let token: string;
  let hello: string;
  let crash: string;
  let slow: string;
  let scratch: string;
  let git: GitServer;
  /** The api's access log: one JSON line per request, with its route and method. */
  const apiLog: string[] = [];
  const { slipway, inTerminal, bin, env } = cliUser(() => ({ baseUrl: h.baseUrl, token }));
  const agent = edgeAgent();
  const get = (url: string) => edgeGet(url, { agent });

  /** A folder of its own under the test's scratch folder, filled from `from` when given. */
  async function folder(name: string, from?: string): Promise<string> {
    const dir = path.join(scratch, name);
    if (from) await fs.cp(from, dir, { recursive: true });
    else await fs.mkdir(dir);
    return dir;
  }
  const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;
  const linkOf = async (dir: string) =>
    JSON.parse(await fs.readFile(path.join(dir, '.slipway', 'app.json'), 'utf8')) as Record<string, string>;
  /** Requests the api served since `from` in its access log, as "METHOD route". */
  const requestsSince = (from: number) =>
    apiLog
      .slice(from)
      .map((l) => JSON.parse(l) as { route?: string; method?: string })
      .filter((l) => l.method !== undefined && l.route !== undefined)
      .map((l) => `${l.method} ${l.route}`);

  beforeAll(async () => {
    h = await startHarness(
      'clilink',
      {
        RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        // One user creates every app of this file: more than the default ten in a quarter of an hour.
        RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100',
        ALLOW_PRIVATE_GIT_HOSTS: 'true',
        LOG_LEVEL: 'info',
      },
      { logDestination: { write: (line: string) => void apiLog.push(line) } },
    );
    token = (await h.newOrg('pro')).token;
    hello = await buildFixtureImage(h.docker, 'hello');
    crash = await buildFixtureImage(h.docker, 'crash');
    slow = await buildFixtureImage(h.docker, 'slow-hello');
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-cli-link-'));
    git = await startGitServer();
  }, 300_000);
  afterAll(async () => {
    await agent.close();
    await h?.stop();
    await git?.stop();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  describe('a folder deployed twice', () => {
    let dir: string;
    let id: string;
    let url: string;

    it('in a terminal, the first deploy creates the app, links the folder and adds .slipway/ to its ignore files', async () => {
      dir = await folder('site', SITE);
      await fs.writeFile(path.join(dir, '.gitignore'), 'node_modules');
      await fs.writeFile(path.join(dir, '.dockerignore'), '.git\n');
      const r = await inTerminal(['deploy', '--name', 'cli-link-site', '--wait'], undefined, { cwd: dir });
      expect(r.code).toBe(0);
      expect(r.screen).toContain(`linked ${dir} to cli-link-site`);
      expect(r.screen).toContain('.slipway/ added to .gitignore and .dockerignore');
      url = /is running at (http:\S+)/.exec(r.screen)![1]!;
      id = /ID (\S+)/.exec(r.screen)![1]!;
      expect(await linkOf(dir)).toEqual({ deploymentId: id, name: 'cli-link-site', apiUrl: h.baseUrl });
      expect(await fs.readFile(path.join(dir, '.slipway', 'app.json'), 'utf8')).not.toContain(token);
      expect((await fs.readFile(path.join(dir, '.gitignore'), 'utf8')).split('\n')).toContain('.slipway/');
      expect((await fs.readFile(path.join(dir, '.dockerignore'), 'utf8')).split('\n')).toContain('.slipway/');
      expect((await get(url)).status).toBe(200);
      const build = json<{ lines: { stream: string }[] }>(await slipway(['logs', '--build', '--json'], { cwd: dir }));
      expect(build.lines.length).toBeGreaterThan(0);
      expect(build.lines.every((l) => l.stream === 'build')).toBe(true);
      // The API rebuilds no folder of its own accord: the folder is what ships again.
      const again = await slipway(['redeploy'], { cwd: dir });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('cli-link-site was built from an uploaded folder');
      expect(again.stderr).toContain('slipway deploy in it');
    });

    it('without a terminal, the second deploy ships a release of the same deployment: same ID, same URL, no creation', async () => {
      const nonce = `${process.pid}-${Date.now()}`;
      await fs.writeFile(
        path.join(dir, 'Dockerfile'),
        // The shell's sum ends the output line, not the step line that shows the command.
        `FROM slipway/static\nRUN echo release-two-${nonce}-$((20+22))\nCOPY index.html /srv/www/index.html\n`,
      );
      await fs.writeFile(path.join(dir, 'index.html'), 'the second release\n');
      // A follower of the build lines, started before the release: the event stream, resumed from its cursor.
      const follower = spawn(process.execPath, [bin, 'logs', '-f', '--build', '--json', '--limit', '1'], {
        cwd: dir,
        env: env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let followed = '';
      follower.stdout.on('data', (c: Buffer) => (followed += c.toString()));
      try {
        await eventually(async () => (followed.includes('\n') ? true : undefined), 'the last build line');
        const from = apiLog.length;
        const r = await slipway(['deploy', '--wait'], { cwd: dir });
        expect(r.code).toBe(0);
        expect(r.stderr).not.toContain('\u001b');
        // The build's lines as they came, then the outcome at the same URL.
        expect(r.stderr).toMatch(new RegExp(`^\\[\\s*\\d+\\.\\ds\\] {3}\\| .*release-two-${nonce}-42$`, 'm'));
        expect(r.stdout).toContain(`cli-link-site is running at ${url} (release r2, `);
        expect(r.stdout).toContain(`ID ${id}`);
        expect((await get(url)).body).toBe('the second release\n');
        const d = json<{ id: string; url: string; revision: number }>(
          await slipway(['status', '--json'], { cwd: dir }),
        );
        expect(d).toMatchObject({ id, url, revision: 2 });
        const requests = requestsSince(from);
        expect(requests.filter((q) => q === 'POST /platform/deployments/:id/redeploy')).toHaveLength(1);
        expect(requests).not.toContain('POST /platform/deployments');
        expect(await linkOf(dir)).toMatchObject({ deploymentId: id });

        await eventually(
          async () => (followed.includes(`release-two-${nonce}-42`) ? true : undefined),
          'the new build line in the follower',
        );
        const lines = followed
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { stream: string; message: string });
        expect(lines.every((l) => l.stream === 'build')).toBe(true);
        expect(lines.filter((l) => l.message.endsWith(`release-two-${nonce}-42`))).toHaveLength(1);
      } finally {
        follower.kill();
      }
    });

    it('a release that fails to start: exit 1, why and the hint, and the release before still serves', async () => {
      await fs.writeFile(
        path.join(dir, 'Dockerfile'),
        'FROM slipway/static\nCMD ["busybox", "sh", "-c", "echo \'boom: missing DATABASE_URL\' >&2; exit 3"]\n',
      );
      const r = await slipway(['deploy', '--wait'], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/slipway: the new release of cli-link-site failed( \(\w+\))?: /);
      expect(r.stderr).toMatch(/^hint: \S/m);
      expect(r.stderr).toContain('boom: missing DATABASE_URL');
      expect(r.stderr).toContain(`release r2 still serves at ${url}`);
      expect((await get(url)).body).toBe('the second release\n');
      const asJson = await slipway(['status', '--json'], { cwd: dir });
      expect(json<{ lastFailure: { hint: string } }>(asJson).lastFailure.hint).toEqual(expect.any(String));
      await fs.rm(path.join(dir, 'Dockerfile'));
    });

    it('--new creates another app and links the folder to it; the first keeps running', async () => {
      const r = await slipway(['deploy', '--new', '--name', 'cli-link-site2', '--json'], { cwd: dir });
      expect(r.code).toBe(0);
      const accepted = json<{ deployment: { id: string }; link: { file: string } }>(r);
      expect(accepted.deployment.id).not.toBe(id);
      expect(accepted.link.file).toBe(path.join(dir, '.slipway', 'app.json'));
      expect(r.stderr).toContain(`the folder was linked to cli-link-site (${id}), which keeps running`);
      expect(await linkOf(dir)).toMatchObject({ deploymentId: accepted.deployment.id, name: 'cli-link-site2' });
      // Not added twice.
      expect((await fs.readFile(path.join(dir, '.gitignore'), 'utf8')).match(/\.slipway\//g)).toHaveLength(1);
      expect((await slipway(['destroy', '--yes'], { cwd: dir })).code).toBe(0);
      await expect(fs.stat(path.join(dir, '.slipway'))).rejects.toThrow('ENOENT');
      expect((await slipway(['link', 'cli-link-site'], { cwd: dir })).code).toBe(0);
    });
  });

  it('link NAME, an ambiguous name refused with the candidates, unlink, and commands without a link', async () => {
    const dir = await folder('images');
    const first = await slipway(['deploy', '--image', hello, '--name', 'cli-twin', '--json'], { cwd: dir });
    const a = json<{ deployment: { id: string } }>(first).deployment.id;
    expect(await linkOf(dir)).toEqual({ deploymentId: a, name: 'cli-twin', apiUrl: h.baseUrl });
    // The same name again, in another folder: names are not unique.
    const other = await folder('images-twin');
    const b = json<{ deployment: { id: string } }>(
      await slipway(['deploy', '--image', hello, '--name', 'cli-twin', '--json'], { cwd: other }),
    ).deployment.id;

    const ambiguous = await slipway(['link', 'cli-twin'], { cwd: dir });
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('2 deployments are named cli-twin');
    expect(ambiguous.stderr).toContain(a);
    expect(ambiguous.stderr).toContain(b);
    expect(ambiguous.stderr).toContain('give the ID of the one you mean');
    const ambiguousJson = json<{ candidates: { id: string }[] }>(await slipway(['link', 'cli-twin', '--json']));
    expect(ambiguousJson.candidates.map((c) => c.id).sort()).toEqual([a, b].sort());
    expect(await linkOf(dir)).toMatchObject({ deploymentId: a });

    const none = await slipway(['link', 'cli-nobody'], { cwd: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no deployment named cli-nobody');

    const linked = await slipway(['link', b, '--json'], { cwd: dir });
    expect(json(linked)).toMatchObject({
      file: path.join(dir, '.slipway', 'app.json'),
      deploymentId: b,
      name: 'cli-twin',
      apiUrl: h.baseUrl,
      ignoredIn: [],
    });
    expect(Object.keys(json(linked)).sort()).toEqual(['apiUrl', 'deploymentId', 'file', 'ignoredIn', 'name', 'url']);
    expect(json<{ id: string }>(await slipway(['status', '--json'], { cwd: dir })).id).toBe(b);

    const unlinked = await slipway(['unlink', '--json'], { cwd: dir });
    expect(json(unlinked)).toEqual({
      file: path.join(dir, '.slipway', 'app.json'),
      unlinked: true,
      deploymentId: b,
      name: 'cli-twin',
    });
    expect(json(await slipway(['unlink', '--json'], { cwd: dir }))).toEqual({ file: null, unlinked: false });
    const unlinkedStatus = await slipway(['status'], { cwd: dir });
    expect(unlinkedStatus.code).toBe(1);
    expect(unlinkedStatus.stderr).toContain(`${dir} is not linked to one`);
    expect(unlinkedStatus.stderr).toContain('slipway link ID|NAME');

    expect((await slipway(['destroy', a, '--yes'])).code).toBe(0);
    expect((await slipway(['destroy', b, '--yes'])).code).toBe(0);
  });

  it('a stale link (destroyed, another organisation’s, another server’s) says so and how to fix it', async () => {
    const dir = await folder('stale');
    const id = json<{ deployment: { id: string } }>(
      await slipway(['deploy', '--image', hello, '--name', 'cli-stale', '--json'], { cwd: dir }),
    ).deployment.id;

    // Another organisation's token sees nothing of it: the same words as a destroyed one.
    const stranger = (await h.newOrg('pro')).token;
    const foreign = await slipway(['status'], { cwd: dir, env: { SLIPWAY_TOKEN: stranger } });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`this folder is linked to cli-stale (${id}), which ${h.baseUrl} does not show`);

    expect((await client(h, token).del(`/platform/deployments/${id}`)).status).toBe(204);
    for (const args of [['status'], ['deploy'], ['logs'], ['env', 'list'], ['redeploy']]) {
      const r = await slipway(args, { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`this folder is linked to cli-stale (${id}), which ${h.baseUrl} does not show`);
      expect(r.stderr).toContain('slipway link ID|NAME');
      expect(r.stderr).toContain('slipway deploy --new');
    }
    const asJson = await slipway(['status', '--json'], { cwd: dir });
    expect(json(asJson)).toMatchObject({ status: 404, link: path.join(dir, '.slipway', 'app.json') });

    const elsewhere = await slipway(['status'], { cwd: dir, env: { SLIPWAY_URL: 'http://127.0.0.1:9' } });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(
      `linked to cli-stale on ${h.baseUrl}, but this command talks to http://127.0.0.1:9`,
    );
    expect(elsewhere.stderr).toContain(`--url ${h.baseUrl}`);
  });

  it('in a linked folder every command takes the link; --json prints one document of each shape; env values never show', async () => {
    const dir = await folder('env');
    const secret = 'hunter2-never-printed';
    const deployed = await slipway(
      [
        'deploy',
        '--image',
        hello,
        '--name',
        'cli-env',
        '--env',
        `API_KEY=${secret}`,
        '--env',
        'MODE=first-mode',
        '--wait',
        '--json',
      ],
      { cwd: dir },
    );
    expect(deployed.code).toBe(0);
    const d = json<{ id: string; url: string; envVarNames: string[] }>(deployed);
    expect(d.envVarNames).toEqual(['API_KEY', 'MODE']);
    const outputs = [deployed.stdout, deployed.stderr];

    const list = await slipway(['list', '--json'], { cwd: dir });
    expect(json(list)).toMatchObject({ deployments: expect.arrayContaining([expect.objectContaining({ id: d.id })]) });
    expect((await slipway(['list'], { cwd: dir })).stdout).toMatch(
      new RegExp(`^\\* cli-env +running +r1 +http\\S+ +${d.id}$`, 'm'),
    );
    const status = await slipway(['status', '--json'], { cwd: dir });
    expect(json(status)).toMatchObject({ id: d.id, name: 'cli-env', url: d.url });
    expect(json(await slipway(['open', '--json'], { cwd: dir }))).toEqual({ id: d.id, name: 'cli-env', url: d.url });
    const releases = await slipway(['releases', '--json'], { cwd: dir });
    expect(json(releases)).toMatchObject({ releases: [{ revision: 1 }], total: 1 });
    const logs = await slipway(['logs', '--app', '--json'], { cwd: dir });
    const lines = json<{ deploymentId: string; lines: { stream: string }[] }>(logs);
    expect(lines.deploymentId).toBe(d.id);
    expect(lines.lines.every((l) => l.stream === 'stdout' || l.stream === 'stderr')).toBe(true);
    const env = await slipway(['env', 'list', '--json'], { cwd: dir });
    expect(json(env)).toEqual({ id: d.id, name: 'cli-env', envVarNames: ['API_KEY', 'MODE'] });
    const envText = await slipway(['env', 'list'], { cwd: dir });
    expect(envText.stdout).toBe('API_KEY\nMODE\n');
    outputs.push(list.stdout, status.stdout, releases.stdout, logs.stdout, env.stdout, envText.stdout);
    outputs.push((await slipway(['status'], { cwd: dir })).stdout);

    // A new environment replaces the whole set: the names that go are said first, the values never.
    const from = apiLog.length;
    const redeployed = await slipway(['redeploy', '--env', 'MODE=second-mode', '--wait', '--json'], { cwd: dir });
    expect(redeployed.code).toBe(0);
    expect(redeployed.stderr).toContain('the environment is replaced by MODE (removed: API_KEY)');
    expect(json(redeployed)).toMatchObject({ state: 'succeeded', outcome: { status: 'running', revision: 2 } });
    const requests = requestsSince(from);
    expect(requests.filter((r) => r === 'POST /platform/deployments/:id/redeploy')).toHaveLength(1);
    expect(requests).toContain('GET /platform/deployments/:id/events');
    expect(requests.filter((r) => r.includes('/compat'))).toEqual([]);
    const plain = await slipway(['redeploy', '--env', `API_KEY=${secret}`, '--env', 'MODE=third-mode', '--wait'], {
      cwd: dir,
    });
    expect(plain.code).toBe(0);
    // The command's own status line, followed on the event stream.
    expect(plain.stderr).toMatch(
      /^\[\s*\d+\.\ds\] running: release 3: starting 1 instance beside the serving one \(env: API_KEY, MODE\)$/m,
    );
    expect(plain.stdout).toContain(`cli-env is running release r3 at ${d.url}`);
    outputs.push(redeployed.stdout, redeployed.stderr, plain.stdout, plain.stderr);
    outputs.push(await fs.readFile(path.join(dir, '.slipway', 'app.json'), 'utf8'));
    for (const text of outputs)
      for (const value of [secret, 'first-mode', 'second-mode', 'third-mode']) expect(text).not.toContain(value);

    // The opener runs only for a person at a terminal; a pipe gets the URL alone.
    const bin = await folder('bin');
    const opened = path.join(bin, 'opened');
    await fs.writeFile(path.join(bin, 'xdg-open'), `#!/bin/sh\necho "$OPEN_TAG $1" >> '${opened}'\n`, { mode: 0o755 });
    const PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
    const piped = await slipway(['open'], { cwd: dir, env: { PATH, OPEN_TAG: 'pipe' } });
    expect(piped.stdout).toBe(`${d.url}\n`);
    const terminal = await inTerminal(['open'], undefined, { cwd: dir, env: { PATH, OPEN_TAG: 'tty' } });
    expect(terminal.code).toBe(0);
    expect(terminal.screen).toContain(d.url);
    await eventually(
      async () => ((await fs.readFile(opened, 'utf8').catch(() => '')) ? true : undefined),
      'the opener',
    );
    expect(await fs.readFile(opened, 'utf8')).toBe(`tty ${d.url}\n`);

    expect((await slipway(['destroy', '--yes', '--json'], { cwd: dir })).stdout).toContain('"unlinked"');
  });

  it('an image app in a linked folder: deploy --image ships a release of it, redeploy pulls its image again', async () => {
    const dir = await folder('image-app');
    const first = json<{ deployment: { id: string } }>(
      // It listens only 6 s after it starts: the next deploy comes while it is still deploying.
      await slipway(['deploy', '--image', slow, '--name', 'cli-image-app', '--json'], { cwd: dir }),
    );
    const id = first.deployment.id;
    // Still deploying: refused before anything is sent, with what to do.
    const early = await slipway(['deploy', '--image', hello], { cwd: dir });
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/cli-image-app is (queued|deploying): a new release can ship once it is running/);
    await eventually(
      async () =>
        json<{ status: string }>(await slipway(['status', '--json'], { cwd: dir })).status === 'running'
          ? true
          : undefined,
      'the first release to run',
    );
    const second = await slipway(['deploy', '--image', hello, '--wait', '--json'], { cwd: dir });
    expect(second.code).toBe(0);
    expect(json(second)).toMatchObject({ id, status: 'running', revision: 2 });
    const again = await slipway(['redeploy', '--wait', '--json'], { cwd: dir });
    expect(again.code).toBe(0);
    expect(json(again)).toMatchObject({ state: 'succeeded', outcome: { status: 'running', revision: 3 } });
    const refused = await slipway(['deploy', '--image', hello, '--name', 'cli-other'], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('this folder is linked to cli-image-app; --name cli-other names another app');
    expect(refused.stderr).toContain('pass --new to create cli-other');
    expect((await slipway(['destroy', '--yes'], { cwd: dir })).code).toBe(0);
  });

  it('deploy --image --wait over an event stream that answers late follows the release it sent to its end', async () => {
    const dir = await folder('late-stream');
    // Every event stream reaches the api 3 s after it is asked for, as over a slow link or on a busy server: a release
    // is sent only once the stream's end before it is known, or its events would be taken for older ones.
    const proxy = await apiProxy(new URL(h.baseUrl), { delayEventsMs: 3000 });
    const env = { SLIPWAY_URL: proxy.url };
    try {
      const first = await slipway(['deploy', '--image', hello, '--name', 'cli-late-stream', '--wait', '--json'], {
        cwd: dir,
        env,
      });
      expect(first.code).toBe(0);
      const r = await slipway(['deploy', '--image', hello, '--wait', '--json', '--timeout', '90s'], { cwd: dir, env });
      expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(json(r)).toMatchObject({ status: 'running', revision: 2 });
      expect((await slipway(['destroy', '--yes'], { cwd: dir, env })).code).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('a Git app: deploy --git links the folder, deploy --git there builds the new head at the same URL, redeploy too', async () => {
    const repo = await git.addRepo('acme/cli-link-git', SITE);
    const dir = await folder('git-app');
    const first = await slipway(['deploy', '--git', repo, '--name', 'cli-link-git', '--wait', '--json'], { cwd: dir });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("slipway deploy --git here now rebuilds its repository's head");
    const d = json<{ id: string; url: string }>(first);
    expect(await linkOf(dir)).toEqual({ deploymentId: d.id, name: 'cli-link-git', apiUrl: h.baseUrl });

    await git.addCommit('acme/cli-link-git', { 'index.html': 'the second commit\n' });
    const second = await slipway(['deploy', '--git', '--wait', '--json'], { cwd: dir });
    expect(second.code).toBe(0);
    expect(json(second)).toMatchObject({ id: d.id, url: d.url, status: 'running', revision: 2 });
    expect((await get(d.url)).body).toBe('the second commit\n');

    await git.addCommit('acme/cli-link-git', { 'index.html': 'the third commit\n' });
    const again = await slipway(['redeploy', '--wait', '--json'], { cwd: dir });
    expect(again.code).toBe(0);
    expect(json(again)).toMatchObject({ state: 'succeeded', outcome: { status: 'running', revision: 3 } });
    expect((await get(d.url)).body).toBe('the third commit\n');

    // With no link, --git alone names nothing to build.
    const bare = await slipway(['deploy', '--git']);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('give the repository: --git URL');
    expect((await slipway(['destroy', '--yes'], { cwd: dir })).code).toBe(0);
    // Three builds from Git, each followed to its end: on 2 busy cores that outlasts the default two minutes.
  }, 420_000);

  it('scale, stop and start on the link, each followed to its outcome with --wait', async () => {
    const dir = await folder('controls');
    const d = json<{ id: string; url: string }>(
      await slipway(['deploy', '--image', hello, '--name', 'cli-controls', '--wait', '--json'], { cwd: dir }),
    );
    const scaled = await slipway(['scale', '2', '--wait', '--json'], { cwd: dir });
    expect(scaled.code).toBe(0);
    expect(json(scaled)).toMatchObject({ state: 'succeeded', outcome: { replicas: 2, status: 'running' } });
    const stopped = await slipway(['stop', '--wait'], { cwd: dir });
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain('cli-controls is stopped');
    expect(json<{ status: string }>(await slipway(['status', '--json'], { cwd: dir })).status).toBe('stopped');
    // Refused at once, with what the status allows.
    const refused = await slipway(['stop'], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^slipway: .*stopped/);
    const started = await slipway(['start', '--wait'], { cwd: dir });
    expect(started.code).toBe(0);
    expect(started.stdout).toContain(`cli-controls is running again at ${d.url}`);
    expect((await get(d.url)).status).toBe(200);
    expect((await slipway(['destroy', '--yes'], { cwd: dir })).code).toBe(0);
  });

  it('a first deploy --wait that fails: exit 1, the cause and the hint, and the folder stays linked to fix it', async () => {
    const dir = await folder('crash');
    const r = await slipway(['deploy', '--image', crash, '--name', 'cli-link-crash', '--wait'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/slipway: cli-link-crash failed \(\w+\): /);
    expect(r.stderr).toMatch(/^hint: \S/m);
    expect(r.stderr).toContain('boom: missing DATABASE_URL');
    expect(r.stderr).toContain('next: fix it and run slipway deploy here again (a new release of cli-link-crash)');
    const id = (await linkOf(dir)).deploymentId!;
    const asJson = await slipway(['status', '--json'], { cwd: dir });
    expect(json(asJson)).toMatchObject({ id, status: 'failed', error: { hint: expect.any(String) } });
    expect((await slipway(['destroy', '--yes'], { cwd: dir })).code).toBe(0);
  });
});
