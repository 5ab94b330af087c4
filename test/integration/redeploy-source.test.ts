import { createHash, randomUUID } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { LABELS } from '@shared/constants';

import { baseImageEnv } from '../helpers/base-images';
import { client } from '../helpers/client';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { readResult } from '../helpers/mcp';
import { archiveForm, makeZip } from '../helpers/zip';

type Api = ReturnType<typeof client>;
type Body = { status: string; message: string; data: Record<string, unknown> };
interface Accepted {
  data: { deployment: { id: string; url: string | null }; command: { id: string; url: string } };
}
interface Progress {
  data: { state: 'running' | 'succeeded' | 'failed'; outcome?: { revision: number }; message?: string };
}
interface Deployment {
  id: string;
  status: string;
  url: string | null;
  revision: number;
  envVarNames: string[];
  lastFailure?: { phase: string; command: string; revision: number; message: string; exitCode?: number };
}
interface Release {
  revision: number;
  trigger: string;
  status: string;
  image: string;
  imageId: string;
  rollbackOf?: number;
  source?: Record<string, unknown>;
}

/** A Node app with no dependencies that answers `version` at every path; `exit` makes it exit as it starts. */
const appFiles = (version: string, opts: { exit?: boolean; failBuild?: boolean } = {}): Record<string, string> => ({
  'package.json': JSON.stringify({
    name: 'shipped-app',
    version: '1.0.0',
    private: true,
    scripts: {
      start: 'node server.js',
      ...(opts.failBuild
        ? { build: 'node -e "console.error(\'compile error: missing semicolon\'); process.exit(1)"' }
        : {}),
    },
  }),
  'server.js': opts.exit
    ? "console.error('exiting on purpose: no config'); process.exit(3);\n"
    : `require('node:http').createServer((_q, r) => r.end('${version}\\n')).listen(Number(process.env.PORT || 8080));\n`,
});
const nodeApp = (version: string, opts: { exit?: boolean; failBuild?: boolean } = {}) =>
  makeZip(appFiles(version, opts));

/**
 * New code shipped to a running deployment (a zip, an image) as its next release: the same deployment, the same URL,
 * built beside the serving release and switched to in one move; a broken change leaves the old release serving.
 */
describe('redeploy with a new source', () => {
  let h: Harness;
  let git: GitServer;
  let image: string;

  beforeAll(async () => {
    const base = await baseImageEnv();
    git = await startGitServer();
    h = await startHarness('newsrc', {
      // The Git server is on loopback.
      ALLOW_PRIVATE_GIT_HOSTS: 'true',
      ...base,
      DEPLOY_READY_TIMEOUT_S: '20',
      // Two creations per user: a user who ships many releases of one deployment never meets it.
      RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '2',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_PLATFORM_PER_15MIN: '10000',
    });
    image = await buildFixtureImage(h.docker, 'hello');
  }, 300_000);
  afterAll(async () => {
    await h?.stop();
    await git?.stop();
  });

  /** What a release built from each upload should record: the zip's own digest and size, as computed here. */
  const uploaded = new Map<string, { type: 'upload'; uploadId: string; sha256: string; size: number }>();
  async function upload(api: Api, zip: Buffer): Promise<string> {
    const r = await api.call<{ uploadId: string }>('POST', '/compat/uploads/zip', archiveForm(zip, 'app.zip'));
    expect(r.status).toBe(201);
    const sha256 = createHash('sha256').update(zip).digest('hex');
    uploaded.set(r.body.uploadId, { type: 'upload', uploadId: r.body.uploadId, sha256, size: zip.length });
    return r.body.uploadId;
  }
  const sourceOf = (uploadId: string) => uploaded.get(uploadId)!;

  /** POSTs a command (202 expected) and follows it to its end. */
  async function command(api: Api, id: string, name: 'redeploy' | 'rollback' | 'stop', body: Record<string, unknown>) {
    const r = await api.post<Accepted>(`/platform/deployments/${id}/${name}`, body);
    expect([r.status, r.body]).toEqual([202, expect.anything()]);
    return settled(api, r.body.data.command.url);
  }
  const redeploy = (api: Api, id: string, body: Record<string, unknown>) => command(api, id, 'redeploy', body);

  /** Where an accepted command ended, once it has. */
  const settled = (api: Api, url: string) =>
    eventually(
      async () => {
        const p = await api.get<Progress>(new URL(url, h.baseUrl).pathname);
        return p.body.data.state === 'running' ? undefined : p.body.data;
      },
      `the command ${url} to end`,
      600_000,
    );

  const get = async (api: Api, id: string) =>
    (await api.get<{ data: Deployment }>(`/platform/deployments/${id}`)).body.data;
  const releases = async (api: Api, id: string) =>
    (await api.get<{ data: { releases: Release[] } }>(`/platform/deployments/${id}/releases?limit=100`)).body.data
      .releases;
  const buildLines = async (api: Api, id: string) =>
    (
      await api.get<{ data: { lines: { message: string }[] } }>(
        `/platform/deployments/${id}/logs?stream=build&limit=1000`,
      )
    ).body.data.lines.map((l) => l.message);

  /**
   * A client fetching the URL every 50 ms, one request at a time, noting each answer's status and body. A request that
   * got no answer at all is sent once more at once, as clients send an idempotent request again: the router's reload
   * (any other deployment's new route, in another test file) closes connections it had just accepted
   * (docs/architecture.md, "Edge router"). Any answer, and a second request without one, is noted as it is.
   */
  function poll(url: string) {
    const seen: { status: number; text: string }[] = [];
    let on = true;
    const get = () =>
      fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
        async (r) => ({ status: r.status, text: (await r.text()).trim() }),
        (err: unknown) => ({ status: 0, text: String(err) }),
      );
    const loop = (async () => {
      while (on) {
        const first = await get();
        seen.push(first.status === 0 ? await get() : first);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    return {
      seen,
      async stop() {
        on = false;
        await loop;
        return seen;
      },
    };
  }
  /** The answers with each run of equal bodies folded into one: the versions in the order they were served. */
  const versions = (seen: { text: string }[]) => seen.map((s) => s.text).filter((t, i, all) => t !== all[i - 1]);

  async function deployZip(api: Api, zip: Buffer, more: Record<string, unknown> = {}) {
    return deploy(api, { uploadId: await upload(api, zip), ...more });
  }
  async function deploy(api: Api, body: Record<string, unknown>) {
    const r = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: `ship-${randomUUID().slice(0, 6)}`,
      port: 8080,
      ...body,
    });
    expect(r.status).toBe(202);
    const id = r.body.data.deployment.id;
    const d = await eventually(
      async () => {
        const got = await get(api, id);
        return ['running', 'failed'].includes(got.status) ? got : undefined;
      },
      'the first deploy',
      300_000,
    );
    expect(d.status).toBe('running');
    return { id, url: d.url! };
  }

  it('ships three zips and a commit at the same URL with no failed request; a broken change leaves the previous one serving; rollback needs no build', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    // The deployment's project names the repository a Git redeploy builds when the body names none.
    const repo = `acme/shipped-${randomUUID().slice(0, 8)}`;
    const repoUrl = await git.addRepo(repo, appFiles('v0'));
    const project = await api.post<{ data: { id: string } }>('/platform/projects', { name: repo.slice(5), repoUrl });
    expect(project.status).toBe(200);
    const first = await upload(api, await nodeApp('v1'));
    const { id, url } = await deploy(api, { uploadId: first, projectId: project.body.data.id });
    const shipped = [first];
    expect(url).toMatch(/^http:\/\/ship-[a-z0-9-]+\.localhost:\d+$/);
    await eventually(async () => ((await fetch(url)).ok ? true : undefined), 'v1 to answer');
    const poller = poll(url);

    for (const [n, version] of [
      [2, 'v2'],
      [3, 'v3'],
      [4, 'v4'],
    ] as const) {
      shipped.push(await upload(api, await nodeApp(version)));
      const done = await redeploy(api, id, { uploadId: shipped.at(-1) });
      expect(done).toMatchObject({ state: 'succeeded', outcome: { revision: n } });
      expect(await get(api, id)).toMatchObject({ status: 'running', url, revision: n });
    }

    // A commit that is not the branch's head: exactly that commit is built.
    const v5 = await git.addCommit(repo, appFiles('v5'));
    await git.addCommit(repo, appFiles('head'));
    expect(await redeploy(api, id, { git: { commit: v5 } })).toMatchObject({
      state: 'succeeded',
      outcome: { revision: 5 },
    });
    expect(await get(api, id)).toMatchObject({ status: 'running', url, revision: 5 });
    expect((await buildLines(api, id)).join('\n')).toContain(`cloned commit ${v5}`);

    // A build that fails: nothing changes but lastFailure, and the build's own line is in the log.
    const failedBuild = await redeploy(api, id, {
      uploadId: await upload(api, await nodeApp('v6', { failBuild: true })),
    });
    expect(failedBuild).toMatchObject({ state: 'failed', message: expect.stringMatching(/build/i) });
    expect(await get(api, id)).toMatchObject({
      status: 'running',
      url,
      revision: 5,
      lastFailure: { phase: 'build', command: 'redeploy', revision: 6 },
    });
    expect((await buildLines(api, id)).join('\n')).toContain('compile error: missing semicolon');

    // An app that exits as it starts: its release fails, the previous one goes on serving.
    const exiting = await upload(api, await nodeApp('v7', { exit: true }));
    const exits = await redeploy(api, id, { uploadId: exiting });
    expect(exits).toMatchObject({ state: 'failed' });
    const afterExit = await get(api, id);
    expect(afterExit).toMatchObject({
      status: 'running',
      url,
      revision: 5,
      lastFailure: { command: 'redeploy', revision: 7 },
    });
    expect(['start', 'ready']).toContain(afterExit.lastFailure!.phase);
    expect((await fetch(url).then((r) => r.text())).trim()).toBe('v5');

    // Back to the first release: its image is still on the engine, so nothing is built.
    const builtBefore = (await buildLines(api, id)).length;
    expect(await command(api, id, 'rollback', { revision: 1 })).toMatchObject({
      state: 'succeeded',
      outcome: { revision: 8 },
    });
    const seen = await poller.stop();

    expect((await buildLines(api, id)).length).toBe(builtBefore);
    expect(seen.filter((s) => s.status < 200 || s.status > 299)).toEqual([]);
    expect(versions(seen)).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v1']);
    const list = await releases(api, id);
    expect(list.map((r) => [r.revision, r.trigger, r.status])).toEqual([
      [8, 'rollback', 'active'],
      [7, 'redeploy', 'failed'],
      [5, 'redeploy', 'superseded'],
      [4, 'redeploy', 'superseded'],
      [3, 'redeploy', 'superseded'],
      [2, 'redeploy', 'superseded'],
      [1, 'deploy', 'superseded'],
    ]);
    expect(list[0]!.imageId).toBe(list.at(-1)!.imageId);
    // Each release built its own image, tagged with its revision, and says what from: the rollback its target's.
    expect(list.map((r) => r.image)).toEqual([1, 7, 5, 4, 3, 2, 1].map((n) => `slipway/${id}:${n}`));
    expect(list.map((r) => r.source)).toEqual([
      sourceOf(first),
      sourceOf(exiting),
      { type: 'git', repoUrl, commit: v5 },
      ...shipped
        .slice()
        .reverse()
        .map((u) => sourceOf(u)),
    ]);
    // The engine keeps exactly the images of the kept releases: none of them was pruned, nothing else was left.
    const images = await h.docker.listImages({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
    expect(new Set(images.map((i) => i.Id))).toEqual(new Set(list.map((r) => r.imageId)));
    // The status read shows the newest of them.
    const read = await api.get<{ data: { releases: { recent: Release[] } } }>(`/platform/deployments/${id}`);
    expect(read.body.data.releases.recent[0]!.source).toEqual(sourceOf(first));
  }, 600_000);

  it('rebuilds the deployment\'s own repository at its head with {"git": {}}, and another branch when named', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    const repo = `acme/own-${randomUUID().slice(0, 8)}`;
    const repoUrl = await git.addRepo(repo, appFiles('first'), {
      extraBranches: { feature: appFiles('feature') },
    });
    const { id, url } = await deploy(api, { repoUrl });
    expect((await fetch(url).then((r) => r.text())).trim()).toBe('first');
    const second = await git.addCommit(repo, appFiles('second'));

    expect(await redeploy(api, id, { git: {} })).toMatchObject({ state: 'succeeded', outcome: { revision: 2 } });
    expect((await fetch(url).then((r) => r.text())).trim()).toBe('second');
    expect(await redeploy(api, id, { git: { branch: 'feature' } })).toMatchObject({ state: 'succeeded' });
    expect((await fetch(url).then((r) => r.text())).trim()).toBe('feature');
    const list = await releases(api, id);
    expect(list[1]!.source).toEqual({ type: 'git', repoUrl, commit: second });
    expect(list[0]!.source).toEqual({
      type: 'git',
      repoUrl,
      branch: 'feature',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(list[0]!.source!.commit).not.toBe(second);

    // A commit the repository does not have fails the build, naming it; the last release goes on serving.
    const missing = 'f'.repeat(40);
    const failed = await redeploy(api, id, { git: { commit: missing } });
    expect(failed).toMatchObject({
      state: 'failed',
      message: expect.stringContaining(`the commit ${missing} is not in`),
    });
    expect(await get(api, id)).toMatchObject({ status: 'running', revision: 3, lastFailure: { phase: 'build' } });
    expect((await fetch(url).then((r) => r.text())).trim()).toBe('feature');
  }, 300_000);

  it('brings up a deployment whose first build failed with new code; a stopped one given a broken release stays stopped', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    const r = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: `ship-${randomUUID().slice(0, 6)}`,
      port: 8080,
      uploadId: await upload(api, await nodeApp('never', { failBuild: true })),
    });
    const id = r.body.data.deployment.id;
    const failed = await eventually(
      async () => ((await get(api, id)).status === 'failed' ? get(api, id) : undefined),
      'the first build to fail',
      300_000,
    );
    expect(failed).toMatchObject({ url: null, revision: 1 });

    // Nothing was ever built, yet new code needs no earlier release: the same deployment comes up.
    expect(await redeploy(api, id, { uploadId: await upload(api, await nodeApp('fixed')) })).toMatchObject({
      state: 'succeeded',
      outcome: { revision: 2, status: 'running' },
    });
    const fixed = await get(api, id);
    expect(fixed).toMatchObject({ id, status: 'running', revision: 2 });
    expect((await fetch(fixed.url!).then((res) => res.text())).trim()).toBe('fixed');

    expect(await command(api, id, 'stop', {})).toMatchObject({ state: 'succeeded' });
    const broken = await redeploy(api, id, { uploadId: await upload(api, await nodeApp('x', { exit: true })) });
    expect(broken).toMatchObject({ state: 'failed' });
    expect(await get(api, id)).toMatchObject({
      status: 'stopped',
      revision: 2,
      lastFailure: { command: 'redeploy', revision: 3 },
    });
  }, 300_000);

  it('ships an image to a deployment built from a zip, keeping its environment', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    const zip = await upload(api, await nodeApp('zip'));
    const { id, url } = await deploy(api, { uploadId: zip });
    expect(await redeploy(api, id, { envVars: { MODE: 'a' } })).toMatchObject({ state: 'succeeded' });
    const done = await redeploy(api, id, { image });
    expect(done).toMatchObject({ state: 'succeeded', outcome: { revision: 3 } });
    expect(await get(api, id)).toMatchObject({ status: 'running', url, envVarNames: ['MODE'] });
    expect((await fetch(url).then((r) => r.text())).trim()).toBe('hello from slipway');
    const [latest, envChange, deployed] = await releases(api, id);
    expect(latest).toMatchObject({ revision: 3, image, envNames: ['MODE'] });
    expect(latest!.source).toEqual({ type: 'image', image, imageId: latest!.imageId });
    // The environment change ran the same code as the release before it, and says so.
    expect([envChange!.source, deployed!.source]).toEqual([sourceOf(zip), sourceOf(zip)]);
  });

  it('refuses a body with no change, two sources or misplaced fields (400), and another organisation’s upload (404)', async () => {
    const { token } = await h.newOrg('pro');
    const api = client(h, token);
    const created = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'bodies', port: 8080 });
    const id = created.body.deploymentId;
    await api.waitFor(id, ['running']);
    const own = await upload(api, await nodeApp('own'));
    const foreign = await upload(client(h, (await h.newOrg('pro')).token), await nodeApp('theirs'));

    const cases: [unknown, number, RegExp][] = [
      [{}, 400, /give envVars \(the new environment\), a new source \(image, uploadId, git\), or both/],
      [{ image, uploadId: own }, 400, /at most one new source: image, uploadId, git \(got image and uploadId\)/],
      [{ uploadId: own, git: {} }, 400, /at most one new source.*\(got uploadId and git\)/],
      [{ image, dockerfilePath: 'Dockerfile' }, 400, /dockerfilePath applies to a source that is built/],
      [
        { git: {} },
        400,
        /git\.repoUrl is needed: deployment .* was not deployed from a Git repository and is in no project/,
      ],
      [{ git: { commit: 'abc1234' } }, 400, /Invalid body\.git\.commit: a full commit SHA/],
      [{ git: { branch: '-x' } }, 400, /Invalid body\.git\.branch: a Git branch name/],
      [{ git: { repoUrl: 'ftp://example.com/x.git' } }, 400, /Invalid body\.git\.repoUrl/],
      [{ git: { repoUrl: 'https://u:p@example.com/x.git' } }, 400, /must not carry credentials/],
      [{ git: { repoUrl: 'http://169.254.169.254/x.git' } }, 400, /repoUrl is refused: .*metadata/],
      [{ git: { repoUrl: 'https://example.com/x.git', token: 'x' } }, 400, /Unrecognized key/i],
      [{ dockerfilePath: 'Dockerfile', envVars: {} }, 400, /dockerfilePath applies to a source that is built/],
      [{ image: '../../etc/passwd' }, 400, /Invalid body\.image/],
      [{ uploadId: 'not-a-uuid' }, 400, /Invalid body\.uploadId/],
      [{ envVars: { 'BAD-NAME': 'x' } }, 400, /Invalid body\.envVars/],
      [{ uploadId: own, repoUrl: 'https://example.com/x.git' }, 400, /Unrecognized key/i],
      [{ uploadId: foreign }, 404, /uploadId .* unknown, expired or not this organisation's/],
      [{ uploadId: randomUUID() }, 404, /uploadId .* unknown/],
    ];
    for (const [body, status, message] of cases) {
      const r = await api.post<Body>(`/platform/deployments/${id}/redeploy`, body);
      expect([body, r.status, r.body.status, r.body.message]).toEqual([
        body,
        status,
        'error',
        expect.stringMatching(message),
      ]);
    }
    // The document states the same forms: the environment change alone first, then each source alone.
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as {
      components: { schemas: Record<string, { oneOf: { required: string[] }[] }> };
    };
    const forms = doc.components.schemas.RedeployRequest!.oneOf;
    expect(forms.map((f) => f.required)).toEqual([['envVars'], ['image'], ['uploadId'], ['git']]);
    expect(forms[0]).toEqual({
      required: ['envVars'],
      not: { anyOf: ['image', 'uploadId', 'git', 'dockerfilePath'].map((k) => ({ required: [k] })) },
    });

    // None of them reached the deployment: one release, the first.
    expect((await releases(api, id)).map((r) => r.revision)).toEqual([1]);
    // Another organisation's deployment is not found, whatever the body.
    const stranger = client(h, (await h.newOrg('pro')).token);
    expect((await stranger.post(`/platform/deployments/${id}/redeploy`, { uploadId: foreign })).status).toBe(404);
    await api.destroyAndWait(id);
  });

  it('counts a redeploy as a platform write, never as a deployment creation: eleven in a row are all accepted', async () => {
    const { token } = await h.newOrg('pro');
    const api = client(h, token);
    // Static sites: the quickest builds there are, as this waits for all eleven.
    const site = (text: string) => makeZip({ 'index.html': `${text}\n` });
    const { id } = await deployZip(api, await site('r0'));
    const uploads = [];
    for (let i = 1; i <= 11; i++) uploads.push(await upload(api, await site(`r${i}`)));
    const remaining: number[] = [];
    const commands: string[] = [];
    for (const uploadId of uploads) {
      const r = await api.post<Accepted>(`/platform/deployments/${id}/redeploy`, { uploadId });
      expect(r.status).toBe(202);
      remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
      commands.push(r.body.data.command.url);
    }
    // Each one spent one point of the platform budget, as any platform request does.
    expect(remaining.slice(1).map((n, i) => remaining[i]! - n)).toEqual(Array(10).fill(1));
    // The creation budget (2 here) still has its second creation: the eleven redeploys spent none of it.
    const second = await api.post('/platform/deployments', { name: 'second', image, port: 8080 });
    expect(second.status).toBe(202);
    const third = await api.post<Body>('/platform/deployments', { name: 'third', image, port: 8080 });
    expect([third.status, third.body.message]).toEqual([429, expect.stringMatching(/2 deployment creations per user/)]);

    // They run one after another, the last one last.
    expect(await settled(api, commands.at(-1)!)).toMatchObject({ state: 'succeeded', outcome: { revision: 12 } });
    expect((await fetch((await get(api, id)).url!).then((r) => r.text())).trim()).toBe('r11');
    expect(
      (await h.docker.listContainers({ filters: { label: [`${LABELS.deploymentId}=${id}`] } })).map(
        (c) => c.Labels[LABELS.revision],
      ),
    ).toEqual(['12']);
  }, 600_000);

  it('the MCP redeploy tool ships an upload through callTool, and refuses what the route refuses', async () => {
    const { token } = await h.newOrg('pro');
    const api = client(h, token);
    const created = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'mcp-ship', port: 8080 });
    const id = created.body.deploymentId;
    const { url } = (await api.waitFor(id, ['running'])) as unknown as { url: string };
    const mcp = new Client({ name: 'newsrc-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      // Listed first, so callTool checks every answer against the tool's outputSchema.
      const tool = (await mcp.listTools()).tools.find((t) => t.name === 'redeploy')!;
      expect(Object.keys(tool.inputSchema.properties!)).toEqual(
        expect.arrayContaining(['deploymentId', 'envVars', 'image', 'uploadId', 'git', 'dockerfilePath', 'waitS']),
      );
      const call = async (args: Record<string, unknown>) =>
        readResult(
          (await mcp.callTool({ name: 'redeploy', arguments: args }, undefined, {
            timeout: 120_000,
          })) as CallToolResult,
        );

      const shipped = await call({
        deploymentId: id,
        uploadId: await upload(api, await nodeApp('from-mcp')),
        waitS: 55,
      });
      expect(shipped).toMatchObject({ isError: false, s: { state: 'succeeded', status: 'running', revision: 2 } });
      expect((await fetch(url).then((r) => r.text())).trim()).toBe('from-mcp');

      const nothing = await call({ deploymentId: id });
      expect(nothing.s).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/give envVars/) });
      const two = await call({ deploymentId: id, image, uploadId: randomUUID() });
      expect(two.s).toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringMatching(/at most one new source/),
      });
      const foreign = await upload(client(h, (await h.newOrg('pro')).token), await nodeApp('theirs'));
      // MCP failures carry the compatibility API's codes; the message says what is wrong.
      expect((await call({ deploymentId: id, uploadId: foreign })).s).toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringMatching(/uploadId .* unknown, expired or not this organisation's/),
      });
    } finally {
      await mcp.close();
    }
    await api.destroyAndWait(id);
  });
});
