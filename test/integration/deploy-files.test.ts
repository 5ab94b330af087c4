import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { baseImageEnv } from '../helpers/base-images';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { readResult } from '../helpers/mcp';

/**
 * An agent ships code with no upload step: deploy_files takes the project inline, zips it into an upload of the
 * caller's org and deploys it (a new app), or with the deploymentId it answered ships the next release at the same URL.
 */
describe('deploy_files (inline source over MCP)', () => {
  let h: Harness;
  const clients: Client[] = [];

  beforeAll(async () => {
    const base = await baseImageEnv();
    h = await startHarness('deploy-files', {
      ...base,
      DEPLOY_READY_TIMEOUT_S: '20',
      RATE_LIMIT_PLATFORM_PER_15MIN: '10000',
    });
  }, 300_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.stop();
  });

  /** Connected and the tools listed, so callTool checks every answer against the tool's outputSchema. */
  async function agent(token: string) {
    const c = new Client({ name: 'deploy-files-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(c);
    await c.listTools();
    return async (args: Record<string, unknown>) =>
      readResult(
        (await c.callTool({ name: 'deploy_files', arguments: args }, undefined, {
          timeout: 120_000,
        })) as CallToolResult,
      );
  }

  const text = async (url: string) => (await fetch(url).then((r) => r.text())).trim();

  it('deploys a static site from inline files, then ships changed files as a new release at the same URL', async () => {
    const { token } = await h.newOrg('pro');
    const deployFiles = await agent(token);

    const first = await deployFiles({
      name: 'inline-site',
      files: [
        { path: 'index.html', content: '<h1>first</h1>\n' },
        { path: 'css/app.css', content: 'h1 { color: teal }\n' },
        { path: 'logo.bin', content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' },
      ],
      waitS: 55,
    });
    expect(first).toMatchObject({
      isError: false,
      s: { created: true, settled: true, deployment: { status: 'running' }, upload: { files: 3 } },
    });
    const id = first.s.deploymentId as string;
    const url = first.s.deployment.url as string;
    expect(url).toMatch(/^http:\/\/inline-site-[a-z0-9]+\.localhost:\d+$/);
    await eventually(async () => ((await text(url)) === '<h1>first</h1>' ? true : undefined), 'the first release');
    expect(await text(`${url}/css/app.css`)).toBe('h1 { color: teal }');
    expect([...new Uint8Array(await (await fetch(`${url}/logo.bin`)).arrayBuffer())]).toEqual([0, 1, 2, 255]);

    // The agent's next turn: the whole project again, changed, to the deployment it got back.
    const second = await deployFiles({
      deploymentId: id,
      files: [{ path: 'index.html', content: '<h1>second</h1>\n' }],
      waitS: 55,
    });
    expect(second).toMatchObject({
      isError: false,
      s: {
        created: false,
        deploymentId: id,
        command: { name: 'redeploy' },
        state: 'succeeded',
        status: 'running',
        revision: 2,
        deployment: { id, url },
      },
    });
    expect(second.s.upload.uploadId).not.toBe(first.s.upload.uploadId);
    expect(await text(url)).toBe('<h1>second</h1>');
    // The files are the whole app: what the second call left out is not served any more.
    expect((await fetch(`${url}/css/app.css`)).status).toBe(404);

    // One deployment, two releases, each built from its own upload.
    const api = client(h, token);
    const list = await api.get<{ data: { deployments: { id: string }[] } }>('/platform/deployments');
    expect(list.body.data.deployments.map((d) => d.id)).toEqual([id]);
    const releases = await api.get<{ data: { releases: { revision: number; trigger: string }[] } }>(
      `/platform/deployments/${id}/releases`,
    );
    expect(releases.body.data.releases.map((r) => [r.revision, r.trigger])).toEqual([
      [2, 'redeploy'],
      [1, 'deploy'],
    ]);
    await api.destroyAndWait(id);
  }, 600_000);

  it('refuses bad paths, files past the caps and misplaced fields, naming the path and the limit, and stores nothing', async () => {
    const { token, orgId } = await h.newOrg('pro');
    const deployFiles = await agent(token);
    const one = [{ path: 'index.html', content: 'x' }];
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'a', files: [...one, { path: '../evil.js', content: 'x' }] }, /"\.\.\/evil\.js" has a \.\. segment/],
      [{ name: 'a', files: [{ path: '/etc/cron.d/x', content: 'x' }] }, /"\/etc\/cron\.d\/x" is an absolute path/],
      [{ name: 'a', files: [{ path: 'a\\b.js', content: 'x' }] }, /"a\\\\b\.js" uses backslashes/],
      [{ name: 'a', files: [...one, ...one] }, /"index\.html" is given twice/],
      [
        {
          name: 'a',
          files: [
            { path: 'lib', content: 'x' },
            { path: 'lib/x.js', content: 'x' },
          ],
        },
        /"lib" is a file, so "lib\/x\.js" cannot be inside it/,
      ],
      [
        { name: 'a', files: [{ path: 'img.png', content: '***', encoding: 'base64' }] },
        /The content of "img\.png" is not base64/,
      ],
      [
        {
          name: 'a',
          files: [
            { path: 'a.bin', content: Buffer.alloc(300 * 1024).toString('base64'), encoding: 'base64' },
            { path: 'b.bin', content: Buffer.alloc(300 * 1024).toString('base64'), encoding: 'base64' },
          ],
        },
        /With "b\.bin" \(307200 bytes\) the files hold more than the 524288 bytes an inline deploy takes/,
      ],
      [
        { name: 'a', files: Array.from({ length: 501 }, (_, i) => ({ path: `f${i}.txt`, content: 'x' })) },
        /at most 500 files inline/,
      ],
      [{ files: one }, /a new app needs a name/],
      [{ deploymentId: crypto.randomUUID(), name: 'again', files: one }, /name applies to a new app/],
    ];
    for (const [args, why] of cases) {
      const r = await deployFiles(args);
      expect([why, r.isError, r.s.code, r.s.message]).toEqual([
        why,
        true,
        'INVALID_REQUEST',
        expect.stringMatching(why),
      ]);
    }
    // Nothing was stored or created, and no creation was spent on a refusal.
    expect(await h.db.collection('uploads').countDocuments({ orgId })).toBe(0);
    const api = client(h, token);
    const list = await api.get<{ data: { total: number } }>('/platform/deployments');
    expect(list.body.data.total).toBe(0);
    const me = await api.get<{ data: { limits: { deployCreate: { remaining: number; limit: number } } } }>(
      '/platform/tokens/current',
    );
    expect(me.body.data.limits.deployCreate).toMatchObject({ limit: 10, remaining: 10 });
  });

  it("answers another organisation's deployment as not found, storing nothing", async () => {
    const owner = await h.newOrg('pro');
    const site = await (
      await agent(owner.token)
    )({ name: 'mine', files: [{ path: 'index.html', content: 'mine' }], waitS: 0 });
    expect(site.isError).toBe(false);
    const other = await h.newOrg('pro');
    const stranger = await agent(other.token);
    const r = await stranger({ deploymentId: site.s.deploymentId, files: [{ path: 'index.html', content: 'theirs' }] });
    expect(r.s).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });
    expect(await h.db.collection('uploads').countDocuments({ orgId: other.orgId })).toBe(0);
    await client(h, owner.token).destroyAndWait(site.s.deploymentId as string);
  }, 300_000);
});
