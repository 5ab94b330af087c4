import { randomUUID } from 'node:crypto';

import { sandboxWorkflowId } from '@shared/contracts/sandbox';
import type { OrgRole } from '@shared/permissions';
import { PERMISSIONS } from '@shared/permissions';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Body = Record<string, unknown>;
type Data<T = Body> = { data: T; message?: string };
interface Org {
  id: string;
  name: string;
  defaultVaultEnvironment: string;
  defaultProvider: string | null;
  allowedProviders: string[] | null;
  defaultRegion: string | null;
  tokenMaxLifetimeS: number | null;
  sandboxIdleS: number | null;
  effective: {
    defaultProvider: string;
    allowedProviders: string[];
    defaultRegion: string | null;
    tokenMaxLifetimeS: number;
    sandboxIdleS: number;
  };
  seller: {
    webhookUrl: string | null;
    webhookSecretSet: boolean;
    apiKey: { createdAt: string; prefix: string | null } | null;
  };
  version: number;
  updatedBy: string | null;
}
interface AuditEv {
  action: string;
  status: number;
  resource: { type: string; id: string | null };
  changes: { field: string; from: unknown; to: unknown }[] | null;
}

/** Organisation settings on the real stack: every role, strict bodies, concurrency, audit, and each setting acting. */
describe('organisation settings', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(
      'organization',
      {
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
        ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        ALLOW_PRIVATE_GIT_HOSTS: 'true',
        SANDBOX_IDLE_S: '1800',
        // Not the default, so what the tests see is this server's setting.
        ENGINE_REGION: 'test-east',
        SANDBOX_SYNC_WAIT_S: '1',
      },
      // No worker: what is checked is what the api decides and what it asks Temporal to start.
      { worker: false },
    );
  });
  afterAll(() => h?.stop());

  async function newOrg(plan: 'free' | 'pro' | 'enterprise' = 'pro') {
    const o = await h.newOrg(plan);
    const as = async (role: OrgRole) => {
      const user = await h.identity.addUser({ orgId: o.orgId, email: `${role}-${randomUUID()}@example.com`, role });
      const t = await h.identity.createToken({
        orgId: o.orgId,
        userId: user._id,
        name: role,
        scopes: [...PERMISSIONS],
      });
      return client(h, t.token);
    };
    return { ...o, owner: client(h, o.token), as };
  }
  const patch = (api: ReturnType<typeof client>, body: Body) =>
    api.call<Data<Org>>('PATCH', '/platform/organization', body);
  const audit = async (api: ReturnType<typeof client>) =>
    (await api.get<Data<{ events: AuditEv[] }>>('/platform/audit?action=organization.update&limit=100')).body.data
      .events;

  it('shows the settings and the seller settings without a secret; members and viewers read, only owners and admins change', async () => {
    const o = await newOrg();
    const fresh = await o.owner.get<Data<Org>>('/platform/organization');
    expect(fresh.status).toBe(200);
    expect(fresh.body.data).toMatchObject({
      id: o.orgId,
      name: 'test-organization',
      defaultVaultEnvironment: 'PRODUCTION',
      defaultProvider: null,
      allowedProviders: null,
      defaultRegion: null,
      tokenMaxLifetimeS: null,
      sandboxIdleS: null,
      effective: {
        defaultProvider: 'engine_local',
        defaultRegion: 'test-east',
        tokenMaxLifetimeS: 365 * 86400,
        sandboxIdleS: 1800,
      },
      seller: { webhookUrl: null, webhookSecretSet: false, apiKey: null },
      version: 0,
    });

    const hook = await o.owner.call<Data<{ secret: string }>>('PUT', '/platform/sales/webhook', {
      url: 'http://127.0.0.1:9/hook',
    });
    expect(hook.status).toBe(200);
    const key = await o.owner.post<Data<{ apiKey: string }>>('/platform/sales/api-keys');
    const apiKey = key.body.data.apiKey;
    const seen = await o.owner.get<Data<Org>>('/platform/organization');
    expect(seen.body.data.seller).toEqual({
      webhookUrl: 'http://127.0.0.1:9/hook',
      webhookSecretSet: true,
      previousSecretsValidUntil: [],
      apiKey: { createdAt: expect.any(String), prefix: apiKey.slice(0, 7) },
    });
    const text = JSON.stringify(seen.body);
    expect([text.includes(apiKey), text.includes(hook.body.data.secret)]).toEqual([false, false]);

    for (const role of ['developer', 'viewer'] as const) {
      const api = await o.as(role);
      expect([role, (await api.get('/platform/organization')).status]).toEqual([role, 200]);
      const refused = await patch(api, { name: 'mine now' });
      expect([role, refused.status, refused.body.message]).toEqual([
        role,
        403,
        expect.stringContaining('organization.manage'),
      ]);
    }
    const admin = await o.as('admin');
    const renamed = await patch(admin, { name: 'Renamed Ltd' });
    expect([renamed.status, renamed.body.data.name, renamed.body.data.version]).toEqual([200, 'Renamed Ltd', 1]);
    // The name principals carry follows: the calling token reads it at once.
    const me = await o.owner.get<Data<{ org: { name: string } }>>('/platform/tokens/current');
    expect(me.body.data.org.name).toBe('Renamed Ltd');
  });

  it('refuses an unknown field by name and contradictory providers; a request that changes nothing writes nothing', async () => {
    const o = await newOrg();
    const unknown = await patch(o.owner, { name: 'x', colour: 'teal' });
    expect([unknown.status, unknown.body.message]).toEqual([400, expect.stringContaining('colour')]);
    const notInPlan = await patch(o.owner, { allowedProviders: ['engine_local', 'cloud_a_run'] });
    expect(notInPlan.status).toBe(200);
    const free = await newOrg('free');
    const beyond = await patch(free.owner, { allowedProviders: ['cloud_a_run'] });
    expect([beyond.status, beyond.body.message]).toEqual([400, expect.stringContaining('not in the free plan')]);
    const defaultOut = await patch(o.owner, { allowedProviders: ['cloud_a_run'] });
    expect([defaultOut.status, defaultOut.body.message]).toEqual([
      400,
      expect.stringContaining('defaultProvider engine_local'),
    ]);
    const dup = await patch(o.owner, { allowedProviders: ['engine_local', 'engine_local'] });
    expect(dup.status).toBe(400);

    const before = (await o.owner.get<Data<Org>>('/platform/organization')).body.data.version;
    const same = await patch(o.owner, { allowedProviders: ['engine_local', 'cloud_a_run'] });
    expect([same.status, same.body.data.version]).toEqual([200, before]);
    const empty = await patch(o.owner, {});
    expect([empty.status, empty.body.data.version]).toEqual([200, before]);
    // Audited as attempts that changed nothing.
    const events = await audit(o.owner);
    expect(events.filter((e) => e.status === 200).map((e) => e.changes)).toEqual([
      [],
      [],
      [{ field: 'allowedProviders', from: null, to: ['engine_local', 'cloud_a_run'] }],
    ]);
  });

  it('keeps every field of concurrent changes, and audits each change with its old and new values', async () => {
    const o = await newOrg();
    const results = await Promise.all([
      patch(o.owner, { name: 'Concurrent' }),
      patch(o.owner, { defaultVaultEnvironment: 'STAGING' }),
      patch(o.owner, { tokenMaxLifetimeS: 7 * 86400 }),
      patch(o.owner, { sandboxIdleS: 600 }),
      patch(o.owner, { allowedProviders: ['engine_local', 'cloud_b_container_apps'] }),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const after = (await o.owner.get<Data<Org>>('/platform/organization')).body.data;
    expect(after).toMatchObject({
      name: 'Concurrent',
      defaultVaultEnvironment: 'STAGING',
      tokenMaxLifetimeS: 7 * 86400,
      sandboxIdleS: 600,
      allowedProviders: ['engine_local', 'cloud_b_container_apps'],
      version: 5,
      updatedBy: o.userId,
    });
    const changes = (await audit(o.owner)).flatMap((e) => e.changes ?? []);
    expect(changes).toEqual(
      expect.arrayContaining([
        { field: 'name', from: 'test-organization', to: 'Concurrent' },
        { field: 'defaultVaultEnvironment', from: 'PRODUCTION', to: 'STAGING' },
        { field: 'tokenMaxLifetimeS', from: null, to: 7 * 86400 },
        { field: 'sandboxIdleS', from: null, to: 600 },
        { field: 'allowedProviders', from: null, to: ['engine_local', 'cloud_b_container_apps'] },
      ]),
    );
    expect(changes).toHaveLength(5);

    const back = await patch(o.owner, { sandboxIdleS: null, name: 'Concurrent' });
    expect(back.body.data.effective.sandboxIdleS).toBe(1800);
    expect((await audit(o.owner))[0]).toMatchObject({
      resource: { type: 'organization', id: o.orgId },
      changes: [{ field: 'sandboxIdleS', from: 600, to: null }],
    });
  });

  it('refuses a new token beyond the maximum lifetime, naming it, and leaves existing tokens alone', async () => {
    const o = await newOrg();
    expect((await patch(o.owner, { tokenMaxLifetimeS: 3600 })).status).toBe(200);
    const tooLong = await o.owner.post<Data>('/platform/tokens', {
      name: 'long',
      scopes: ['deployment.read'],
      expiresIn: '2h',
    });
    expect([tooLong.status, tooLong.body.message]).toEqual([400, expect.stringContaining('3600 seconds')]);
    const fits = await o.owner.post<Data<{ expiresAt: string }>>('/platform/tokens', {
      name: 'short',
      scopes: ['deployment.read'],
      expiresIn: '30m',
    });
    expect(fits.status).toBe(200);
    // One that names no lifetime gets the default cut to the maximum.
    const unnamed = await o.owner.post<Data<{ expiresAt: string }>>('/platform/tokens', {
      name: 'default',
      scopes: ['deployment.read'],
    });
    expect(unnamed.status).toBe(200);
    const lifetime = new Date(unnamed.body.data.expiresAt).getTime() - Date.now();
    expect(lifetime).toBeLessThanOrEqual(3600 * 1000);
    expect(lifetime).toBeGreaterThan(3000 * 1000);
    // The owner's own token, issued for 90 days before the maximum, still works.
    expect((await o.owner.get('/platform/tokens/current')).status).toBe(200);
  });

  it('refuses a deploy to a provider the organisation does not allow, and applies its defaults to deploys and secrets that name none', async () => {
    const o = await newOrg();
    expect((await patch(o.owner, { allowedProviders: ['cloud_a_run'], defaultProvider: 'cloud_a_run' })).status).toBe(
      200,
    );
    const named = await o.owner.post<Body>('/compat/deploy', {
      image: 'slipway-test/none:1',
      name: 'named',
      provider: 'engine_local',
    });
    expect([named.status, named.body.code, named.body.error]).toEqual([
      403,
      'PROVIDER_NOT_ALLOWED',
      expect.stringContaining("not among this organisation's allowed providers"),
    ]);
    // None named: the organisation's default is the one judged (this server runs no cloud adapter yet).
    const unnamed = await o.owner.post<Body>('/compat/deploy', { image: 'slipway-test/none:1', name: 'unnamed' });
    expect([unnamed.status, unnamed.body.code, unnamed.body.error]).toEqual([
      403,
      'PROVIDER_NOT_ALLOWED',
      expect.stringContaining('cloud_a_run'),
    ]);

    expect((await patch(o.owner, { allowedProviders: null, defaultProvider: 'engine_local' })).status).toBe(200);
    const allowed = await o.owner.post<Body>('/compat/deploy', { image: 'slipway-test/none:1', name: 'allowed' });
    expect(allowed.status).toBe(202);
    const d = await o.owner.get<Body>(`/compat/deployments/${allowed.body.deploymentId as string}`);
    expect(d.body.provider).toBe('engine_local');

    const staging = await patch(o.owner, { defaultVaultEnvironment: 'STAGING' });
    expect(staging.status).toBe(200);
    const secret = await o.owner.post<Data<{ environment: string }>>('/platform/secrets', {
      name: 'git-token',
      value: 'ghp_not-a-real-token',
    });
    expect([secret.status, secret.body.data.environment]).toEqual([200, 'STAGING']);
    const named2 = await o.owner.post<Data<{ environment: string }>>('/platform/secrets', {
      name: 'git-token',
      value: 'ghp_not-a-real-token',
      environment: 'DEVELOPMENT',
    });
    expect(named2.body.data.environment).toBe('DEVELOPMENT');
    // A source deploy naming no vault reads the organisation's default: the STAGING token passes its check.
    const token = await o.owner.post<Data<{ id: string }>>('/platform/secrets', {
      name: 'staging-git',
      value: 'ghp_not-a-real-token',
      allowedHosts: ['127.0.0.1'],
    });
    const fromGit = await o.owner.post<Body>('/compat/deploy/source', {
      name: 'from-git',
      repoUrl: 'http://127.0.0.1:9/acme/app.git',
      gitTokenSecretId: token.body.data.id,
    });
    expect([fromGit.status, fromGit.body.error]).toEqual([202, undefined]);
    expect((await o.owner.del(`/compat/deployments/${fromGit.body.deploymentId as string}`)).status).toBe(204);
    expect(JSON.stringify(await audit(o.owner))).not.toContain('ghp_not-a-real-token');
    expect((await o.owner.del(`/compat/deployments/${allowed.body.deploymentId as string}`)).status).toBe(204);
  });

  it('sets a default region among the default provider’s, refuses one it does not have, and lists each provider’s regions', async () => {
    const o = await newOrg();
    const providers = await o.owner.get<{ providers: { id: string; regions: string[] }[] }>('/compat/providers');
    expect(providers.body.providers.map((p) => [p.id, p.regions])).toEqual([
      ['engine_local', ['test-east']],
      ['cloud_a_run', []],
      ['cloud_b_container_apps', []],
      ['cloud_c_ecs_fargate', []],
    ]);

    const unknown = await patch(o.owner, { defaultRegion: 'mars-1' });
    expect([unknown.status, unknown.body.message]).toEqual([
      400,
      expect.stringContaining('engine_local has no region mars-1 on this server; its regions: test-east'),
    ]);
    const badName = await patch(o.owner, { defaultRegion: 'Test East' });
    expect([badName.status, badName.body.message]).toEqual([400, expect.stringContaining('defaultRegion')]);

    const set = await patch(o.owner, { defaultRegion: 'test-east' });
    expect([set.status, set.body.data.defaultRegion, set.body.data.effective.defaultRegion]).toEqual([
      200,
      'test-east',
      'test-east',
    ]);
    expect((await o.owner.get<Data<Org>>('/platform/organization')).body.data.defaultRegion).toBe('test-east');

    // A default provider without that region is refused unless the same request changes the region too; the cloud
    // providers have none on this server, and the message says why.
    const moved = await patch(o.owner, { defaultProvider: 'cloud_a_run' });
    expect([moved.status, moved.body.message]).toEqual([
      400,
      expect.stringMatching(
        /does not have the organisation's defaultRegion test-east: .*the organisation has set none for it/,
      ),
    ]);
    const cloudRegion = await patch(o.owner, { defaultProvider: 'cloud_a_run', defaultRegion: 'test-east' });
    expect([cloudRegion.status, cloudRegion.body.message]).toEqual([
      400,
      expect.stringContaining('cloud_a_run has no regions for this organisation'),
    ]);
    const both = await patch(o.owner, { defaultProvider: 'cloud_a_run', defaultRegion: null });
    expect([both.status, both.body.data.defaultRegion, both.body.data.effective.defaultRegion]).toEqual([
      200,
      null,
      null,
    ]);

    const changes = (await audit(o.owner)).flatMap((e) => e.changes ?? []);
    expect(changes).toEqual([
      { field: 'defaultProvider', from: null, to: 'cloud_a_run' },
      { field: 'defaultRegion', from: 'test-east', to: null },
      { field: 'defaultRegion', from: null, to: 'test-east' },
    ]);
  });

  it('gives a deploy naming no region the default, refuses a region its provider does not have, and shows the region', async () => {
    const o = await newOrg();
    expect((await patch(o.owner, { defaultRegion: 'test-east' })).status).toBe(200);
    const made = await o.owner.post<Data<{ deployment: { id: string; region: string } }>>('/platform/deployments', {
      image: 'slipway-test/none:1',
      name: 'no-region',
    });
    expect([made.status, made.body.data.deployment.region]).toEqual([202, 'test-east']);
    const id = made.body.data.deployment.id;
    const read = await o.owner.get<Data<{ region: string }>>(`/platform/deployments/${id}`);
    expect(read.body.data.region).toBe('test-east');

    for (const [path, body] of [
      ['/platform/deployments', { image: 'slipway-test/none:1', name: 'elsewhere', region: 'mars-1' }],
      ['/compat/deploy', { image: 'slipway-test/none:1', name: 'elsewhere', region: 'mars-1' }],
    ] as const) {
      const refused = await o.owner.post<Body>(path, body);
      expect([path, refused.status, refused.body.message ?? refused.body.error]).toEqual([
        path,
        400,
        expect.stringContaining('engine_local has no region mars-1 on this server; its regions: test-east'),
      ]);
    }
    const named = await o.owner.post<Body>('/compat/deploy', {
      image: 'slipway-test/none:1',
      name: 'named-region',
      region: 'test-east',
    });
    expect(named.status).toBe(202);

    // A record written before deployments kept a region reads as this server's engine region.
    await h.db.collection<{ _id: string }>('deployments').updateOne({ _id: id }, { $unset: { region: '' } });
    const listed = await o.owner.get<Data<{ deployments: { id: string; region: string }[] }>>('/platform/deployments');
    expect(listed.body.data.deployments.map((d) => [d.id === id, d.region])).toEqual(
      expect.arrayContaining([[true, 'test-east']]),
    );
    for (const d of [id, named.body.deploymentId as string])
      expect((await o.owner.del(`/platform/deployments/${d}`)).status).toBe(204);
  });

  it('starts a builder sandbox with the organisation’s idle timeout instead of the server’s', async () => {
    const o = await h.newOrgWithProject();
    const api = client(h, o.token);
    expect((await patch(api, { sandboxIdleS: 300 })).status).toBe(200);
    const session = await api.post<Data<{ id: string }>>('/platform/builder/sessions', { projectId: o.projectId });
    expect(session.status).toBe(200);
    const id = session.body.data.id;
    const configured = await api.call('PUT', `/platform/builder/sessions/${id}/sandbox`, { runtime: 'static' });
    expect(configured.status).toBe(200);
    // No worker runs: the sync is still running when the api stops waiting, and its workflow has started.
    const sync = await api.post<Data<{ state: string }>>(`/platform/builder/sessions/${id}/sandbox/sync`, {});
    expect([sync.status, sync.body.data.state]).toEqual([202, 'running']);
    const handle = h.temporal.workflow.getHandle(sandboxWorkflowId(id));
    try {
      const history = await handle.fetchHistory();
      const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      const input = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as { orgId: string; idleS: number };
      expect(input).toMatchObject({ orgId: o.orgId, idleS: 300 });
    } finally {
      await handle.terminate('test over');
    }
  });
});
