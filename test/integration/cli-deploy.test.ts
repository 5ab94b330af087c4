import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { LABELS } from '@shared/constants';

import { apiProxy } from '../helpers/api-proxy';
import { cliUser } from '../helpers/cli-runner';
import { edgeAgent, edgeGet } from '../helpers/edge';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

const ROOT = path.resolve(__dirname, '..', '..');
const SITE = path.join(ROOT, 'test', 'fixtures', 'sources', 'static-site');
const ESC = '\u001b';

describe('slipway CLI for people (deploy, status, logs, destroy, login) against the real stack', () => {
  let h: Harness;
  let token: string;
  let hello: string;
  let crash: string;
  let slow: string;
  let git: GitServer;
  /** The api's access log: one JSON line per request, with its route, status and duration. */
  const apiLog: string[] = [];

  const { slipway, inTerminal, bin: BIN, env: baseEnv } = cliUser(() => ({ baseUrl: h.baseUrl, token }));

  const agent = edgeAgent();
  /** Through the edge router, at the deployment's stable `*.localhost` URL. */
  const get = (url: string) => edgeGet(url, { agent });

  const containersOf = (id: string) =>
    h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });

  beforeAll(async () => {
    h = await startHarness(
      'clideploy',
      {
        RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        ALLOW_PRIVATE_GIT_HOSTS: 'true',
        LOG_LEVEL: 'info',
      },
      { logDestination: { write: (line: string) => void apiLog.push(line) } },
    );
    token = (await h.newOrg('pro')).token;
    hello = await buildFixtureImage(h.docker, 'hello');
    crash = await buildFixtureImage(h.docker, 'crash');
    slow = await buildFixtureImage(h.docker, 'slow-hello');
    git = await startGitServer();
  }, 300_000);
  afterAll(async () => {
    await agent.close();
    await h?.stop();
    await git?.stop();
  });

  it('deploy --image --wait without a terminal prints plain progress lines, then the URL the app answers at', async () => {
    const r = await slipway(['deploy', '--image', hello, '--name', 'cli-plain', '--env', 'GREETING=hi', '--wait']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^\[\s*\d+\.\ds\] deploying: preparing image /m);
    expect(r.stderr).toMatch(/^\[\s*\d+\.\ds\] running: answering on port 8080$/m);
    expect(r.stderr).not.toContain(ESC);
    const url = /is running at (http:\S+)/.exec(r.stdout)?.[1];
    expect((await get(url!)).body).toBe('hello from slipway\n');

    const id = /^ID (\S+)$/m.exec(r.stdout)![1]!;
    const status = await slipway(['status', id, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ id, status: 'running', url, envVarNames: ['GREETING'] });
    const human = await slipway(['status', id]);
    expect(human.stdout).toMatch(/^ {2}status {3}running$/m);
    expect(human.stdout).toContain('GREETING');
    expect(human.stdout).not.toContain('hi\n');

    const logs = await slipway(['logs', id, '--json', '--limit', '20']);
    expect(JSON.parse(logs.stdout)).toMatchObject({ deploymentId: id, lines: expect.any(Array) });

    // Nobody to ask: without --yes nothing is destroyed.
    const refused = await slipway(['destroy', id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('pass --yes');
    expect(await containersOf(id)).toHaveLength(1);

    const destroyed = await slipway(['destroy', id, '--yes', '--json']);
    expect(JSON.parse(destroyed.stdout)).toEqual({ id, name: 'cli-plain', destroyed: true });
    await eventually(async () => ((await containersOf(id)).length === 0 ? true : undefined), 'the container to go');
    const gone = await slipway(['status', id, '--json']);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout)).toEqual({ status: 404, message: `No deployment ${id} in this organisation.` });
    expect(gone.stderr).toContain(`No deployment ${id}`);
  });

  it('deploy --wait --json of an app that exits: exit 1, the failed deployment as JSON, why on stderr', async () => {
    const r = await slipway(['deploy', '--image', crash, '--name', 'cli-crash', '--wait', '--json']);
    expect(r.code).toBe(1);
    const d = JSON.parse(r.stdout) as { id: string; status: string; error: { message: string } };
    expect(d.status).toBe('failed');
    expect(d.error.message).toContain('boom: missing DATABASE_URL');
    expect(r.stderr).toContain('cli-crash failed');
    expect(r.stderr).toContain(`slipway logs ${d.id}`);
    expect((await slipway(['destroy', d.id, '--yes'])).code).toBe(0);
  });

  it('deploy --dir --wait in a terminal draws live progress; what .gitignore and .dockerignore exclude is not uploaded', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-cli-site-'));
    try {
      await fs.cp(SITE, dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'secret.txt'), 'do not upload');
      await fs.writeFile(path.join(dir, '.gitignore'), 'secret.txt\n');
      await fs.mkdir(path.join(dir, 'drafts'));
      await fs.writeFile(path.join(dir, 'drafts', 'post.html'), 'draft');
      await fs.writeFile(path.join(dir, '.dockerignore'), 'drafts\n');

      const r = await inTerminal(['deploy', '--dir', dir, '--name', 'cli-site', '--wait']);
      expect(r.code).toBe(0);
      // Redrawn in place: cursor up and line clears, the phases, the elapsed time, the final mark.
      expect(r.screen).toMatch(new RegExp(`${ESC}\\[\\d+A`));
      expect(r.screen).toContain(`${ESC}[2K`);
      expect(r.screen).toMatch(/✔ queued {2}✔ building {2}✔ deploying {2}✔ running/);
      expect(r.screen).toMatch(/cli-site {2}running {2}\d+\.\ds/);
      expect(r.screen).toMatch(/zipped \d+ files .*, 2 ignored/);
      const url = /is running at (http:\S+)/.exec(r.screen)![1]!;
      expect((await get(url)).status).toBe(200);
      expect((await get(`${url}/about/`)).status).toBe(200);
      expect((await get(`${url}/secret.txt`)).status).toBe(404);
      expect((await get(`${url}/drafts/post.html`)).status).toBe(404);

      // A destroy asks for the name: a wrong one destroys nothing, the right one destroys.
      const id = /ID (\S+)/.exec(r.screen)![1]!;
      const wrong = await inTerminal(['destroy', id], { prompt: 'to confirm:', keys: 'cli-sit\r' });
      expect(wrong.code).toBe(1);
      expect(wrong.screen).toContain('not destroyed');
      expect(await containersOf(id)).toHaveLength(1);
      const right = await inTerminal(['destroy', id], { prompt: 'to confirm:', keys: 'cli-site\r' });
      expect(right.code).toBe(0);
      expect(right.screen).toContain(`destroyed cli-site (${id})`);
      await eventually(async () => ((await containersOf(id)).length === 0 ? true : undefined), 'the container to go');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('deploy --git --branch builds that branch; logs -f prints new lines as the app writes them, and ends with the deployment', async () => {
    const repo = await git.addRepo('acme/cli-site', SITE, {
      extraBranches: { preview: { 'index.html': 'hello from the preview branch' } },
    });
    const r = await slipway(['deploy', '--git', repo, '--branch', 'preview', '--name', 'cli-git', '--wait', '--json']);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as { id: string; url: string; source: { branch: string } };
    expect(d.source.branch).toBe('preview');
    expect((await get(d.url)).body).toBe('hello from the preview branch');

    // busybox httpd -v logs every answer: one made while following shows up in the follower. The stream reaches the
    // api 2 s after it is asked for, so the answer below is made between the follower's first read and its stream.
    const proxy = await apiProxy(new URL(h.baseUrl), { delayEventsMs: 2000 });
    const from = apiLog.length;
    const follower = spawn(process.execPath, [BIN, 'logs', d.id, '-f', '--json', '--limit', '5'], {
      env: { ...baseEnv(), SLIPWAY_URL: proxy.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let followed = '';
    let said = '';
    follower.stdout.on('data', (c: Buffer) => (followed += c.toString()));
    follower.stderr.on('data', (c: Buffer) => (said += c.toString()));
    const ended = new Promise<number | null>((resolve) => follower.on('close', resolve));
    try {
      await eventually(async () => (followed.length > 0 ? true : undefined), 'the first lines');
      // httpd -v logs each answer's status, not its path: a 404 is the request made here.
      expect(followed).not.toContain('response:404');
      expect((await get(`${d.url}/nope`)).status).toBe(404);
      await eventually(
        async () => (followed.includes('response:404') ? true : undefined),
        'the 404 in the followed lines',
      );
      for (const line of followed.split('\n').filter(Boolean))
        expect(JSON.parse(line)).toEqual({
          timestamp: expect.any(String),
          stream: expect.any(String),
          message: expect.any(String),
          ...((JSON.parse(line) as { instance?: string }).instance ? { instance: expect.any(String) } : {}),
        });
      // The answer made here appears once, however the first read and the stream overlap.
      expect(followed.split('response:404').length - 1).toBe(1);
      expect((await slipway(['destroy', d.id, '--yes'])).code).toBe(0);
      expect(await ended).toBe(0);
      expect(said).toContain(`deployment ${d.id} was destroyed`);
      // One read of the last lines, then one held request: the event stream, never a read every few seconds.
      const reads = apiLog
        .slice(from)
        .map((l) => JSON.parse(l) as { route?: string; method?: string })
        .filter((l) => l.route === '/platform/deployments/:id/logs' || l.route === '/platform/deployments/:id/events');
      expect(reads.map((l) => l.route)).toEqual(['/platform/deployments/:id/logs', '/platform/deployments/:id/events']);
    } finally {
      follower.kill();
      await proxy.close();
    }
  });

  it('Ctrl-C while following stops the watching, not the deployment, and gives the terminal back its cursor', async () => {
    // The app listens only after 6 s: Ctrl-C comes while the display waits for its port.
    const r = await inTerminal(['deploy', '--image', slow, '--name', 'cli-interrupted', '--wait'], {
      prompt: 'started, waiting',
      keys: '\u0003',
    });
    expect(r.code).toBe(130);
    expect(r.screen).toContain('stopped following; the deployment goes on: slipway status ');
    expect(r.screen.lastIndexOf(`${ESC}[?25h`)).toBeGreaterThan(r.screen.lastIndexOf(`${ESC}[?25l`));
    // The last frame says it was left, not that it ended: the phase it was in is marked ■, not ✔.
    expect(r.screen).toMatch(/■ cli-interrupted {2}deploying/);
    const id = /slipway status (\S+)/.exec(r.screen)![1]!;
    await eventually(async () => {
      const s = await slipway(['status', id, '--json']);
      return (JSON.parse(s.stdout) as { status: string }).status === 'running' ? true : undefined;
    }, 'the deployment to run on after the CLI stopped following');
    expect((await slipway(['destroy', id, '--yes'])).code).toBe(0);
  });

  it('--wait follows the platform event stream: one request held for the whole wait, none on the compat API', async () => {
    const from = apiLog.length;
    const r = await slipway(['deploy', '--image', slow, '--name', 'cli-stream', '--wait', '--json']);
    expect(r.code).toBe(0);
    const id = (JSON.parse(r.stdout) as { id: string }).id;
    expect((await slipway(['destroy', id, '--yes'])).code).toBe(0);
    const requests = apiLog
      .slice(from)
      .map((l) => JSON.parse(l) as { route?: string; method?: string; status?: number; durationMs?: number })
      .filter((l) => l.method !== undefined);
    const streams = requests.filter((l) => l.route === '/platform/deployments/:id/events');
    expect(streams).toHaveLength(1);
    expect(streams[0]!.status).toBe(200);
    // The app listens only 6 s after it starts: the stream was open while it did.
    expect(streams[0]!.durationMs).toBeGreaterThan(1000);
    expect(requests.filter((l) => l.route?.startsWith('/compat'))).toEqual([]);
  });

  it('deploy --dir --wait without a terminal prints each of 150 build lines once, in order, between the status changes, even over a connection that keeps dropping', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-cli-chatty-'));
    // Cuts every event stream after 6 KB: the follower must resume where it was, several times.
    const proxy = await apiProxy(new URL(h.baseUrl), { cutEventsAfter: 6000 });
    try {
      // A nonce in the step, so the engine's build cache cannot replay it without output.
      const nonce = `${process.pid}-${Date.now()}`;
      await fs.writeFile(
        path.join(dir, 'Dockerfile'),
        'FROM slipway/static\n' +
          `RUN echo ${nonce} && for i in $(seq 1 150); do printf 'build line %03d\\n' "$i"; done\n` +
          'COPY index.html /srv/www/index.html\n',
      );
      await fs.writeFile(path.join(dir, 'index.html'), 'chatty\n');
      const r = await slipway(['deploy', '--dir', dir, '--name', 'cli-chatty', '--wait'], {
        env: { SLIPWAY_URL: proxy.url },
      });
      expect(r.code).toBe(0);

      const lines = r.stderr.split('\n');
      const numbered = lines.flatMap((l) => /^\[\s*\d+\.\ds\] {3}\| .*build line (\d{3})$/.exec(l)?.[1] ?? []);
      expect(numbered.map(Number)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
      const statusAt = (status: string) =>
        lines.findIndex((l) => new RegExp(`^\\[\\s*\\d+\\.\\ds\\] ${status}: `).test(l));
      const lineAt = (n: string) => lines.findIndex((l) => l.endsWith(`build line ${n}`));
      expect(statusAt('queued')).toBeGreaterThan(-1);
      expect(statusAt('queued')).toBeLessThan(statusAt('building'));
      expect(statusAt('building')).toBeLessThan(lineAt('001'));
      expect(statusAt('deploying')).toBeGreaterThan(lineAt('150'));
      expect(statusAt('running')).toBeGreaterThan(statusAt('deploying'));
      // The stream was cut and resumed along the way.
      expect(proxy.cuts()).toBeGreaterThanOrEqual(2);
      const id = /^ID (\S+)$/m.exec(r.stdout)![1]!;
      expect((await slipway(['destroy', id, '--yes'])).code).toBe(0);
    } finally {
      await proxy.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
