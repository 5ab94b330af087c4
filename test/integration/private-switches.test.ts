import { randomUUID } from 'node:crypto';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Refusal = { status?: string; code?: string; error?: string; message?: string };

/**
 * An installation with every ALLOW_PRIVATE_* switch on, as development runs: loopback and private networks are
 * accepted, link-local and cloud metadata addresses are refused at the api all the same, and nothing is recorded.
 */
describe('ALLOW_PRIVATE_* open private networks, never cloud metadata', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(
      'private-switches',
      {
        ALLOW_PRIVATE_GIT_HOSTS: 'true',
        ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        ALLOW_PRIVATE_REGISTRIES: 'true',
        ALLOW_PRIVATE_AI_PROVIDERS: 'true',
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
      },
      // Nothing here may reach a worker: every refusal is the api's.
      { worker: false },
    );
  });
  afterAll(() => h?.stop());

  const METADATA_HOSTS = ['169.254.169.254', '[fd00:ec2::254]', '100.100.100.200', '[fe80::1]'];

  async function org() {
    const o = await h.newOrgWithProject('pro');
    const { projectId } = o;
    return { ...o, projectId, api: client(h, o.token) };
  }

  const refusedForMetadata = (r: { status: number; body: Refusal }) => {
    expect(r.status).toBe(400);
    expect(r.body.error ?? r.body.message).toMatch(
      /(metadata|link-local).*not even where private networks are allowed/,
    );
  };

  it('refuses a Git deploy, a builder import and a project repository from a metadata address', async () => {
    const { api, orgId, projectId } = await org();
    for (const host of METADATA_HOSTS) {
      const repoUrl = `http://${host}/latest/meta-data.git`;
      refusedForMetadata(await api.post<Refusal>('/compat/deploy/source', { name: 'meta', repoUrl }));
      refusedForMetadata(await api.post<Refusal>('/platform/builder/import/git', { repoUrl, projectId }));
      refusedForMetadata(await api.call<Refusal>('PUT', `/platform/projects/${projectId}`, { repoUrl }));
    }
    expect(await h.db.collection('deployments').countDocuments({ orgId })).toBe(0);
    expect(await h.db.collection('builder_sessions').countDocuments({ orgId })).toBe(0);
    // The switch still opens loopback: the same deploy from 127.0.0.1 is accepted (and queued: no worker runs).
    const local = await api.post<Refusal>('/compat/deploy/source', {
      name: 'local',
      repoUrl: 'http://127.0.0.1:9/acme/app.git',
    });
    expect(local.status).toBe(202);
  });

  it('refuses a webhook, an AI provider and a registry on a metadata address', async () => {
    const { api, orgId } = await org();
    for (const host of METADATA_HOSTS) {
      refusedForMetadata(await api.call<Refusal>('PUT', '/platform/sales/webhook', { url: `http://${host}/hook` }));
      refusedForMetadata(
        await api.post<Refusal>('/platform/ai-providers', {
          name: `meta-${randomUUID().slice(0, 8)}`,
          kind: 'openai_compatible',
          baseUrl: `http://${host}/v1`,
          apiKey: 'sk-test',
          defaultModel: 'gpt-4o-mini',
        }),
      );
    }
    // Image references name IPv4 registries only (the reference grammar has no brackets).
    for (const host of ['169.254.169.254', '100.100.100.200']) {
      const image = await api.post<Refusal>('/compat/deploy', { image: `${host}/latest/meta:1`, name: 'meta' });
      expect(image.status).toBe(400);
      expect(image.body.error).toMatch(/images from the registry .* are refused: .*(metadata|link-local)/);
    }
    expect((await api.get<{ data: unknown[] }>('/platform/ai-providers')).body.data).toEqual([]);
    expect(await h.db.collection('deployments').countDocuments({ orgId })).toBe(0);
    // Loopback stays open for each of them.
    expect((await api.call('PUT', '/platform/sales/webhook', { url: 'http://127.0.0.1:9/hook' })).status).toBe(200);
  });
});
