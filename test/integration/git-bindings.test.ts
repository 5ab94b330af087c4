import { createHmac, randomUUID } from 'node:crypto';

import { PERMISSIONS } from '@shared/permissions';

import { baseImageEnv } from '../helpers/base-images';
import { client } from '../helpers/client';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { connectAgent } from '../helpers/mcp';

type Api = ReturnType<typeof client>;
type Body = Record<string, unknown>;
interface Delivery {
  id: string;
  deliveryId: string | null;
  provider: string | null;
  event: string | null;
  ref: string | null;
  commit: string | null;
  outcome: string;
  reason: string | null;
  releases: { deploymentId: string; commandId: string }[];
}
interface Release {
  revision: number;
  source?: { type: string; commit?: string };
}

const TOKEN = 'glpat-hooked-fixture-token-4b1e';

/** A Node app with no dependencies that answers `version` at every path. */
const appFiles = (version: string): Record<string, string> => ({
  'package.json': JSON.stringify({
    name: 'hooked-app',
    version: '1.0.0',
    private: true,
    scripts: { start: 'node server.js' },
  }),
  'server.js': `require('node:http').createServer((_q, r) => r.end('${version}\\n')).listen(Number(process.env.PORT || 8080));\n`,
});

const hex = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');

/** Push payloads shaped as each provider documents its push event (the fields we read, and their neighbours). */
const githubPush = (ref: string, before: string, after: string, repoUrl: string) => ({
  ref,
  before,
  after,
  created: false,
  deleted: /^0+$/.test(after),
  forced: false,
  base_ref: null,
  compare: `${repoUrl}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
  commits: [{ id: after, message: 'change', timestamp: '2024-01-01T00:00:00Z', added: [], removed: [], modified: [] }],
  head_commit: { id: after, message: 'change' },
  repository: { id: 1296269, name: 'hooked', full_name: 'acme/hooked', clone_url: repoUrl, default_branch: 'main' },
  pusher: { name: 'octocat', email: 'octocat@example.com' },
  sender: { login: 'octocat', id: 1 },
});
const gitlabPush = (ref: string, before: string, after: string, repoUrl: string) => ({
  object_kind: 'push',
  event_name: 'push',
  before,
  after,
  ref,
  ref_protected: true,
  checkout_sha: /^0+$/.test(after) ? null : after,
  user_id: 4,
  user_name: 'John Smith',
  user_username: 'jsmith',
  project_id: 15,
  project: { id: 15, name: 'hooked', git_http_url: repoUrl, default_branch: 'main' },
  commits: [{ id: after, message: 'change', timestamp: '2024-01-01T00:00:00+00:00', added: [], modified: [] }],
  total_commits_count: 1,
  repository: { name: 'hooked', git_http_url: repoUrl },
});
const giteaPush = (ref: string, before: string, after: string, repoUrl: string) => ({
  ref,
  before,
  after,
  compare_url: `${repoUrl}/compare/${before}...${after}`,
  commits: [{ id: after, message: 'change\n', url: `${repoUrl}/commit/${after}` }],
  head_commit: { id: after, message: 'change\n' },
  repository: { id: 1, name: 'hooked', full_name: 'acme/hooked', clone_url: repoUrl, default_branch: 'main' },
  pusher: { login: 'gitea', id: 1 },
  sender: { login: 'gitea', id: 1 },
});

/**
 * Git bindings against a real Git smart-HTTP server on loopback: a push, delivered as GitHub, GitLab, Gitea or our
 * generic scheme sends it, ships a new release of exactly the pushed commit through the redeploy service, and the app
 * serves the new code; an unsigned, wrongly signed, replayed or other-branch push starts nothing and is listed.
 */
describe('Git bindings', () => {
  let h: Harness;
  let git: GitServer;

  beforeAll(async () => {
    const base = await baseImageEnv();
    git = await startGitServer();
    h = await startHarness('gitbind', {
      // The Git server is on loopback.
      ALLOW_PRIVATE_GIT_HOSTS: 'true',
      ...base,
      DEPLOY_READY_TIMEOUT_S: '20',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_PLATFORM_PER_15MIN: '10000',
    });
  }, 300_000);
  afterAll(async () => {
    await h?.stop();
    await git?.stop();
  });

  /** Posts a delivery to the hooks origin as a Git host does: raw JSON text, no token. */
  async function deliver(webhookUrl: string, text: string, headers: Record<string, string>) {
    const res = await fetch(`${h.baseUrl}${new URL(webhookUrl).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/test', ...headers },
      body: text,
    });
    const body = (await res.json()) as { status: string; message?: string; data?: Delivery & { outcome: string } };
    return { status: res.status, body };
  }
  const github = (secret: string, text: string, event = 'push', id: string = randomUUID()) => ({
    'x-github-event': event,
    'x-github-delivery': id,
    'x-hub-signature-256': `sha256=${hex(secret, text)}`,
  });

  const releases = async (api: Api, id: string) =>
    (await api.get<{ data: { releases: Release[] } }>(`/platform/deployments/${id}/releases?limit=100`)).body.data
      .releases;
  const deliveries = async (api: Api, bindingId: string) =>
    (
      await api.get<{ data: { deliveries: Delivery[]; total: number } }>(
        `/platform/git/bindings/${bindingId}/deliveries`,
      )
    ).body.data;

  /** Follows an accepted redeploy command to its end. */
  const settled = (api: Api, deploymentId: string, commandId: string) =>
    eventually(
      async () => {
        const p = await api.get<{ data: { state: string; outcome?: { revision: number }; message?: string } }>(
          `/platform/deployments/${deploymentId}/commands/${encodeURIComponent(commandId)}`,
        );
        return p.body.data.state === 'running' ? undefined : p.body.data;
      },
      `the command ${commandId} to end`,
      600_000,
    );

  async function answers(url: string, want: string) {
    return eventually(async () => {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      const text = res?.ok ? (await res.text()).trim() : undefined;
      return text === want ? text : undefined;
    }, `${url} to answer ${want}`);
  }

  /** A private repository, its token in the vault, and a running deployment built from it. */
  async function deployedRepo(api: Api, projectId?: string, environment = 'PRODUCTION') {
    const repo = `acme/hooked-${randomUUID().slice(0, 8)}`;
    const repoUrl = await git.addRepo(repo, appFiles('v1'), { private: { token: TOKEN } });
    const secret = await api.post<{ data: { id: string } }>('/platform/secrets', {
      name: `GIT_${randomUUID().slice(0, 6)}`,
      value: TOKEN,
      environment,
      allowedHosts: ['127.0.0.1'],
    });
    expect(secret.status).toBe(200);
    const tokenSecretId = secret.body.data.id;
    const r = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: `hooked-${randomUUID().slice(0, 6)}`,
      repoUrl,
      gitTokenSecretId: tokenSecretId,
      port: 8080,
      vaultEnvironment: environment,
      ...(projectId ? { projectId } : {}),
    });
    expect([r.status, r.body]).toEqual([202, expect.anything()]);
    const id = r.body.data.deployment.id;
    const d = await eventually(
      async () => {
        const got = (await api.get<{ data: { status: string; url: string | null } }>(`/platform/deployments/${id}`))
          .body.data;
        return ['running', 'failed'].includes(got.status) ? got : undefined;
      },
      'the first deploy',
      300_000,
    );
    expect(d.status).toBe('running');
    await answers(d.url!, 'v1');
    return { repo, repoUrl, tokenSecretId, deploymentId: id, url: d.url! };
  }

  it('ships exactly the pushed commit on a signed GitHub push; unsigned, wrongly signed, replayed and other-branch pushes start nothing and are listed', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const { repo, repoUrl, tokenSecretId, deploymentId, url } = await deployedRepo(api);
    const first = await git.addCommit(repo, {});

    const connection = await api.post<{ data: Body }>('/platform/git/connections', {
      provider: 'github',
      baseUrl: git.url,
      tokenSecretId,
    });
    expect([connection.status, connection.body.data]).toEqual([
      201,
      expect.objectContaining({ provider: 'github', baseUrl: git.url, tokenSecretId }),
    ]);
    expect(JSON.stringify(connection.body)).not.toContain(TOKEN);
    const made = await api.post<{ data: Body & { id: string; webhookUrl: string; webhookSecret: string } }>(
      '/platform/git/bindings',
      { connectionId: connection.body.data.id, repoUrl, branch: 'main', deploymentId },
    );
    expect([made.status, made.body.data]).toEqual([
      201,
      expect.objectContaining({ target: 'deployment', deploymentId, provider: 'github', branch: 'main' }),
    ]);
    const { id: bindingId, webhookUrl, webhookSecret: secret } = made.body.data;
    expect(webhookUrl).toBe(`${h.baseUrl}/hooks/git/${bindingId}`);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    // Shown once: never in a read, a list, the audit trail, nor in the clear at rest.
    const read = await api.get<{ data: Body }>(`/platform/git/bindings/${bindingId}`);
    expect([read.status, read.body.data.webhookUrl]).toEqual([200, webhookUrl]);
    for (const text of [
      JSON.stringify(read.body),
      JSON.stringify((await api.get('/platform/git/bindings')).body),
      JSON.stringify((await api.get('/platform/audit?limit=100')).body),
      JSON.stringify(await h.db.collection('git_bindings').findOne({ _id: bindingId as never })),
    ])
      expect(text).not.toContain(secret);
    expect(await releases(api, deploymentId)).toHaveLength(1);

    // A ping: 200, nothing starts.
    const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    expect(await deliver(webhookUrl, ping, github(secret, ping, 'ping'))).toMatchObject({
      status: 200,
      body: { data: { outcome: 'ignored', reason: 'ping' } },
    });

    const v2 = await git.addCommit(repo, appFiles('v2'));
    const push = JSON.stringify(githubPush('refs/heads/main', first, v2, repoUrl));
    // Unsigned, and signed with another secret: 401, nothing starts.
    const unsigned = await deliver(webhookUrl, push, { 'x-github-event': 'push', 'x-github-delivery': randomUUID() });
    expect([unsigned.status, unsigned.body.message]).toEqual([401, expect.stringMatching(/unsigned/)]);
    const forged = await deliver(webhookUrl, push, github('not-the-secret', push));
    expect([forged.status, forged.body.message]).toEqual([401, expect.stringMatching(/bad signature/)]);
    // Signed over other bytes than those sent.
    const tampered = await deliver(webhookUrl, push.replace(v2, first), github(secret, push));
    expect(tampered.status).toBe(401);
    // Another branch, and a branch's deletion: 200, ignored.
    const other = JSON.stringify(githubPush('refs/heads/feature', first, v2, repoUrl));
    expect(await deliver(webhookUrl, other, github(secret, other))).toMatchObject({
      status: 200,
      body: { data: { outcome: 'ignored', reason: 'other branch: refs/heads/feature, bound to refs/heads/main' } },
    });
    const deletion = JSON.stringify(githubPush('refs/heads/main', v2, '0'.repeat(40), repoUrl));
    expect(await deliver(webhookUrl, deletion, github(secret, deletion))).toMatchObject({
      status: 200,
      body: { data: { outcome: 'ignored' } },
    });
    expect(await releases(api, deploymentId)).toHaveLength(1);

    // The signed push to main: a redeploy of exactly v2, and the app serves it.
    const deliveryId = randomUUID();
    const shipped = await deliver(webhookUrl, push, github(secret, push, 'push', deliveryId));
    expect([shipped.status, shipped.body.data]).toEqual([
      202,
      expect.objectContaining({ outcome: 'shipped', releases: [{ deploymentId, commandId: expect.any(String) }] }),
    ]);
    const commandId = shipped.body.data!.releases[0]!.commandId;
    // A replay of the same delivery, at once: a duplicate, nothing more starts.
    expect(await deliver(webhookUrl, push, github(secret, push, 'push', deliveryId))).toMatchObject({
      status: 200,
      body: { data: { outcome: 'duplicate', id: null } },
    });
    expect(await settled(api, deploymentId, commandId)).toMatchObject({ state: 'succeeded', outcome: { revision: 2 } });
    await answers(url, 'v2');
    const after = await releases(api, deploymentId);
    expect(after).toHaveLength(2);
    expect(after[0]).toMatchObject({ revision: 2, source: { type: 'git', commit: v2 } });
    // Replayed once more after it shipped: still a duplicate, still two releases.
    expect((await deliver(webhookUrl, push, github(secret, push, 'push', deliveryId))).body.data?.outcome).toBe(
      'duplicate',
    );
    expect(await releases(api, deploymentId)).toHaveLength(2);

    // Every delivery listed, newest first, with its outcome (the duplicates are not listed again).
    const listed = await deliveries(api, bindingId);
    expect(listed.deliveries.map((d) => [d.outcome, d.event, d.ref, d.commit])).toEqual([
      ['shipped', 'push', 'refs/heads/main', v2],
      ['ignored', 'push', 'refs/heads/main', null],
      ['ignored', 'push', 'refs/heads/feature', v2],
      ['refused', null, null, null],
      ['refused', null, null, null],
      ['refused', null, null, null],
      ['ignored', 'ping', null, null],
    ]);
    expect(listed.deliveries[0]).toMatchObject({
      deliveryId,
      provider: 'github',
      releases: [{ deploymentId, commandId }],
    });
    expect(listed.deliveries[3]!.reason).toMatch(/bad signature/);
    expect(listed.deliveries[5]!.reason).toMatch(/unsigned/);
    // The release it shipped is audited as the system's act, on the hooks origin.
    const audit = await api.get<{ data: { events: Body[] } }>(
      `/platform/audit?resourceId=${deploymentId}&action=deployment.redeploy`,
    );
    expect(audit.body.data.events).toEqual([
      expect.objectContaining({
        origin: 'hooks',
        actor: expect.objectContaining({ type: 'system', userId: org.userId }),
      }),
    ]);

    // The connection is in use; the binding goes first, and its webhook URL is unknown from then on.
    expect((await api.del(`/platform/git/connections/${connection.body.data.id as string}`)).status).toBe(409);
    expect((await api.del(`/platform/git/bindings/${bindingId}`)).status).toBe(200);
    expect((await deliver(webhookUrl, push, github(secret, push))).status).toBe(404);
    expect((await api.del(`/platform/git/connections/${connection.body.data.id as string}`)).status).toBe(200);
  });

  it('verifies GitLab, Gitea and generic deliveries by their own schemes, each shipping the pushed commit', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const project = await api.post<{ data: { id: string } }>('/platform/projects', { name: 'hooked' });
    const projectId = project.body.data.id;
    // The token in STAGING while the organisation's default is PRODUCTION: each push reads it where the secret is.
    const { repo, repoUrl, tokenSecretId, deploymentId, url } = await deployedRepo(api, projectId, 'STAGING');
    const bind = async (provider: string, target: Body = { deploymentId }) => {
      const c = await api.post<{ data: { id: string; vaultEnvironment: string } }>('/platform/git/connections', {
        provider,
        baseUrl: git.url,
        tokenSecretId,
      });
      expect([c.status, c.body.data.vaultEnvironment]).toEqual([201, 'STAGING']);
      const b = await api.post<{ data: { id: string; webhookUrl: string; webhookSecret: string } }>(
        '/platform/git/bindings',
        { connectionId: c.body.data.id, repoUrl, branch: 'main', ...target },
      );
      expect(b.status).toBe(201);
      return b.body.data;
    };
    let head = await git.addCommit(repo, {});
    let revision = 1;
    const ships = async (
      binding: { id: string },
      answer: { status: number; body: { data?: Delivery } },
      version: string,
      commit: string,
    ) => {
      expect([answer.status, answer.body.data?.outcome]).toEqual([202, 'shipped']);
      expect(answer.body.data!.releases).toEqual([{ deploymentId, commandId: expect.any(String) }]);
      revision += 1;
      expect(await settled(api, deploymentId, answer.body.data!.releases[0]!.commandId)).toMatchObject({
        state: 'succeeded',
        outcome: { revision },
      });
      await answers(url, version);
      expect((await releases(api, deploymentId))[0]).toMatchObject({ revision, source: { commit } });
      expect((await deliveries(api, binding.id)).deliveries[0]).toMatchObject({ outcome: 'shipped', commit });
    };

    // GitLab: the secret itself in X-Gitlab-Token; the commit from checkout_sha.
    const gitlab = await bind('gitlab');
    const v2 = await git.addCommit(repo, appFiles('gitlab'));
    const glText = JSON.stringify(gitlabPush('refs/heads/main', head, v2, repoUrl));
    const glHeaders = (token: string) => ({
      'x-gitlab-event': 'Push Hook',
      'x-gitlab-token': token,
      'x-gitlab-event-uuid': randomUUID(),
    });
    expect((await deliver(gitlab.webhookUrl, glText, glHeaders('wrong'))).status).toBe(401);
    // GitHub's headers, though signed with the secret, are not the scheme of a GitLab binding.
    expect((await deliver(gitlab.webhookUrl, glText, github(gitlab.webhookSecret, glText))).status).toBe(401);
    await ships(gitlab, await deliver(gitlab.webhookUrl, glText, glHeaders(gitlab.webhookSecret)), 'gitlab', v2);
    head = v2;

    // Gitea: the bare hex HMAC in X-Gitea-Signature.
    const gitea = await bind('gitea');
    const v3 = await git.addCommit(repo, appFiles('gitea'));
    const gtText = JSON.stringify(giteaPush('refs/heads/main', head, v3, repoUrl));
    const gtHeaders = (signature: string) => ({
      'x-gitea-event': 'push',
      'x-gitea-delivery': randomUUID(),
      'x-gitea-signature': signature,
    });
    expect((await deliver(gitea.webhookUrl, gtText, gtHeaders(hex('wrong', gtText)))).status).toBe(401);
    await ships(
      gitea,
      await deliver(gitea.webhookUrl, gtText, gtHeaders(hex(gitea.webhookSecret, gtText))),
      'gitea',
      v3,
    );
    head = v3;

    // Generic: sha256=HMAC("<timestamp>.<body>"), the timestamp within five minutes.
    const generic = await bind('generic');
    const v4 = await git.addCommit(repo, appFiles('generic'));
    const gnText = JSON.stringify({ ref: 'refs/heads/main', before: head, after: v4 });
    const gnHeaders = (secret: string, text: string, ts: number) => ({
      'x-slipway-event': 'push',
      'x-slipway-delivery': randomUUID(),
      'x-slipway-timestamp': String(ts),
      'x-slipway-signature': `sha256=${hex(secret, `${ts}.${text}`)}`,
    });
    const now = Math.floor(Date.now() / 1000);
    expect(
      (await deliver(generic.webhookUrl, gnText, gnHeaders(generic.webhookSecret, gnText, now - 600))).status,
    ).toBe(401);
    await ships(
      generic,
      await deliver(generic.webhookUrl, gnText, gnHeaders(generic.webhookSecret, gnText, now)),
      'generic',
      v4,
    );

    // A project binding: the push ships to the project's deployments built from the repository (this one).
    const ofProject = await bind('generic', { projectId });
    const v5 = await git.addCommit(repo, appFiles('project'));
    const pjText = JSON.stringify({ ref: 'refs/heads/main', before: v4, after: v5 });
    await ships(
      ofProject,
      await deliver(
        ofProject.webhookUrl,
        pjText,
        gnHeaders(ofProject.webhookSecret, pjText, Math.floor(Date.now() / 1000)),
      ),
      'project',
      v5,
    );
  });

  it('keeps bindings, their deliveries and their connections to their organisation, and refuses bad input', async () => {
    const aOrg = await h.newOrg('pro');
    const a = client(h, aOrg.token);
    const b = client(h, (await h.newOrg('pro')).token);
    const repoUrl = await git.addRepo(`acme/public-${randomUUID().slice(0, 8)}`, appFiles('p'));
    const d = await a.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: `a-${randomUUID().slice(0, 6)}`,
      image: 'slipway-test/none:1',
    });
    const deploymentId = d.body.data.deployment.id;
    const aSecret = await a.post<{ data: { id: string } }>('/platform/secrets', {
      name: 'A_GIT',
      value: TOKEN,
      allowedHosts: ['127.0.0.1'],
    });
    const aConnection = await a.post<{ data: { id: string } }>('/platform/git/connections', {
      provider: 'gitea',
      baseUrl: git.url,
      tokenSecretId: aSecret.body.data.id,
    });
    expect(aConnection.status).toBe(201);
    const made = await a.post<{ data: { id: string; webhookUrl: string; webhookSecret: string } }>(
      '/platform/git/bindings',
      { repoUrl, branch: 'main', deploymentId },
    );
    expect(made.status).toBe(201);
    const bindingId = made.body.data.id;

    // B: A's deployment, A's connection, A's secret, A's binding and its deliveries are all unknown.
    expect((await b.post('/platform/git/bindings', { repoUrl, branch: 'main', deploymentId })).status).toBe(404);
    const bProject = await b.post<{ data: { id: string } }>('/platform/projects', { name: 'b-project' });
    expect(
      (
        await b.post('/platform/git/bindings', {
          connectionId: aConnection.body.data.id,
          repoUrl,
          branch: 'main',
          projectId: bProject.body.data.id,
        })
      ).status,
    ).toBe(404);
    const stolen = await b.post<{ message: string }>('/platform/git/connections', {
      provider: 'gitea',
      baseUrl: git.url,
      tokenSecretId: aSecret.body.data.id,
    });
    expect([stolen.status, stolen.body.message]).toEqual([
      400,
      expect.stringMatching(/not a secret of this organisation/),
    ]);
    expect((await b.get(`/platform/git/bindings/${bindingId}`)).status).toBe(404);
    expect((await b.get(`/platform/git/bindings/${bindingId}/deliveries`)).status).toBe(404);
    expect((await b.del(`/platform/git/bindings/${bindingId}`)).status).toBe(404);
    expect((await b.del(`/platform/git/connections/${aConnection.body.data.id}`)).status).toBe(404);
    expect((await b.get<{ data: { total: number } }>('/platform/git/bindings')).body.data.total).toBe(0);
    expect((await b.get<{ data: { total: number } }>('/platform/git/connections')).body.data.total).toBe(0);
    expect((await a.get<{ data: { total: number } }>('/platform/git/bindings')).body.data.total).toBe(1);

    // Bad input says what was wrong.
    const refusals: [Body, RegExp][] = [
      [{ repoUrl, branch: 'main' }, /exactly one target: deploymentId or projectId/],
      [{ repoUrl, branch: 'main', deploymentId, projectId: bProject.body.data.id }, /exactly one target/],
      [{ repoUrl: 'https://u:p@example.com/x.git', branch: 'main', deploymentId }, /must not carry credentials/],
      [{ repoUrl: 'http://169.254.169.254/x.git', branch: 'main', deploymentId }, /repoUrl is refused/],
      [{ repoUrl, branch: '-x', deploymentId }, /a Git branch name/],
      [
        { repoUrl: 'https://8.8.8.8/x.git', branch: 'main', deploymentId, connectionId: aConnection.body.data.id },
        /not on the connection’s host/,
      ],
    ];
    for (const [body, message] of refusals) {
      const r = await a.post<{ message: string }>('/platform/git/bindings', body);
      expect([body, r.status, r.body.message]).toEqual([body, 400, expect.stringMatching(message)]);
    }
    const generic = await a.post<{ message: string }>('/platform/git/connections', {
      provider: 'generic',
      tokenSecretId: aSecret.body.data.id,
    });
    expect([generic.status, generic.body.message]).toEqual([
      400,
      expect.stringMatching(/generic connection needs baseUrl/),
    ]);

    // The hooks origin: an unknown binding is 404; a body over 1 MiB is 413; a project binding with no deployment
    // built from the repository ignores the push.
    const text = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40) });
    const sign = {
      'x-hub-signature-256': `sha256=${hex(made.body.data.webhookSecret, text)}`,
      'x-github-event': 'push',
    };
    expect(
      (await deliver(`${h.baseUrl}/hooks/git/${randomUUID()}`, text, { ...sign, 'x-github-delivery': 'x' })).status,
    ).toBe(404);
    const huge = await fetch(made.body.data.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ref: 'refs/heads/main', pad: 'x'.repeat(1_100_000) }),
    });
    expect(huge.status).toBe(413);
    const project = await a.post<{ data: { id: string } }>('/platform/projects', { name: 'hooked-project' });
    const pb = await a.post<{ data: { webhookUrl: string; webhookSecret: string; target: string } }>(
      '/platform/git/bindings',
      {
        repoUrl,
        branch: 'main',
        projectId: project.body.data.id,
      },
    );
    expect([pb.status, pb.body.data.target]).toEqual([201, 'project']);
    const signed = {
      'x-hub-signature-256': `sha256=${hex(pb.body.data.webhookSecret, text)}`,
      'x-github-event': 'push',
    };
    expect(
      await deliver(pb.body.data.webhookUrl, text, { ...signed, 'x-github-delivery': randomUUID() }),
    ).toMatchObject({
      status: 200,
      body: {
        data: { outcome: 'ignored', reason: expect.stringMatching(/no deployment of project .* is built from/) },
      },
    });
    // No delivery ID: replays could not be told apart.
    expect((await deliver(pb.body.data.webhookUrl, text, signed)).status).toBe(400);
    // Refused deliveries are listed up to 20 an hour per binding, so no stranger fills the store.
    for (let i = 0; i < 22; i++)
      expect((await deliver(pb.body.data.webhookUrl, text, { 'x-github-event': 'push' })).status).toBe(401);
    const pbId = new URL(pb.body.data.webhookUrl).pathname.split('/').at(-1)!;
    const pbListed = await deliveries(a, pbId);
    expect([pbListed.total, pbListed.deliveries.filter((x) => x.outcome === 'refused').length]).toEqual([21, 20]);

    // A developer outside the project: its deployment reads as unknown. Made a developer there, they bind it; made a
    // viewer there, their binding's pushes fail, for the creator is checked again at each push.
    const dev = await h.identity.addUser({
      orgId: aOrg.orgId,
      email: `dev-${randomUUID()}@example.com`,
      role: 'developer',
    });
    const devApi = client(
      h,
      (await h.identity.createToken({ orgId: aOrg.orgId, userId: dev._id, name: 'dev', scopes: [...PERMISSIONS] }))
        .token,
    );
    const inProject = await a.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: `p-${randomUUID().slice(0, 6)}`,
      image: 'slipway-test/none:1',
      projectId: project.body.data.id,
    });
    const devBody = { repoUrl, branch: 'main', deploymentId: inProject.body.data.deployment.id };
    const outsider = await devApi.post<{ message: string }>('/platform/git/bindings', devBody);
    expect([outsider.status, outsider.body.message]).toEqual([404, expect.stringMatching(/^No deployment /)]);
    const members = `/platform/projects/${project.body.data.id}/members`;
    expect((await a.post(members, { userId: dev._id, role: 'developer' })).status).toBe(200);
    const devBinding = await devApi.post<{ data: { webhookUrl: string; webhookSecret: string } }>(
      '/platform/git/bindings',
      devBody,
    );
    expect(devBinding.status).toBe(201);
    expect((await a.call('PATCH', `${members}/${dev._id}`, { role: 'viewer' })).status).toBe(200);
    const demoted = await deliver(devBinding.body.data.webhookUrl, text, {
      'x-hub-signature-256': `sha256=${hex(devBinding.body.data.webhookSecret, text)}`,
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
    });
    expect([demoted.status, demoted.body.message]).toEqual([
      400,
      expect.stringMatching(/nothing shipped: the binding’s creator may no longer redeploy here: .*viewer/),
    ]);

    // A push whose redeploy is refused (the deployment was destroyed meanwhile) fails, says why, and is listed so.
    expect((await a.del(`/compat/deployments/${deploymentId}`)).status).toBe(204);
    const gone = await deliver(made.body.data.webhookUrl, text, { ...sign, 'x-github-delivery': randomUUID() });
    expect([gone.status, gone.body.message]).toEqual([400, expect.stringMatching(/nothing shipped: .*No deployment/)]);
    expect((await deliveries(a, bindingId)).deliveries[0]).toMatchObject({
      outcome: 'failed',
      commit: 'a'.repeat(40),
      reason: expect.stringContaining(`${deploymentId}: No deployment ${deploymentId}`),
      releases: [],
    });
  });

  it('lists connections, makes a binding and reads its deliveries through MCP, as an agent calls the tools', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const project = await api.post<{ data: { id: string } }>('/platform/projects', { name: 'agent-project' });
    const repoUrl = await git.addRepo(`acme/agent-${randomUUID().slice(0, 8)}`, appFiles('a'));
    const { client: mcp, call } = await connectAgent(h.baseUrl, org.token, 'git-bindings-test');
    try {
      const names = (await mcp.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'list_git_connections',
          'list_git_bindings',
          'create_git_binding',
          'list_git_deliveries',
        ]),
      );
      expect((await call('list_git_connections', {})).s).toEqual({ connections: [], total: 0 });
      const made = await call('create_git_binding', { repoUrl, branch: 'main', projectId: project.body.data.id });
      expect(made.isError).toBe(false);
      expect(made.s.binding).toMatchObject({ target: 'project', projectId: project.body.data.id, branch: 'main' });
      expect(made.s.binding.webhookSecret).toMatch(/^[0-9a-f]{64}$/);
      expect(made.s.binding.webhookUrl).toMatch(new RegExp(`/hooks/git/${made.s.binding.id as string}$`));
      const listed = await call('list_git_bindings', {});
      expect(listed.s).toMatchObject({ total: 1, bindings: [{ id: made.s.binding.id }] });
      expect(listed.text).not.toContain(made.s.binding.webhookSecret);
      expect((await call('list_git_deliveries', { bindingId: made.s.binding.id })).s).toEqual({
        deliveries: [],
        total: 0,
      });
      const refused = await call('create_git_binding', { repoUrl, branch: 'main' });
      expect([refused.isError, refused.text]).toEqual([true, expect.stringMatching(/exactly one target/)]);
      const unknown = await call('list_git_deliveries', { bindingId: randomUUID() });
      expect([unknown.isError, unknown.s.message]).toEqual([
        true,
        expect.stringMatching(/^No Git binding .* in this organisation/),
      ]);
    } finally {
      await mcp.close();
    }
  });

  // Last: it spends this address's whole budget of deliveries.
  it('limits deliveries per client address, signed or not, before any binding is looked up', async () => {
    let refused: { status: number; body: { message?: string } } | undefined;
    for (let i = 0; i < 250 && !refused; i++) {
      const r = await deliver(`${h.baseUrl}/hooks/git/${randomUUID()}`, '{}', { 'x-github-event': 'push' });
      if (r.status === 429) refused = r;
      else expect(r.status).toBe(404);
    }
    expect(refused?.body.message).toMatch(/^120 webhook deliveries per client address per minute; retry after \d+ s$/);
  });
});
