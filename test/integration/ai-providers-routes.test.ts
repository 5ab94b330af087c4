import { randomUUID } from 'node:crypto';

import { type ProviderDouble, startAnthropicDouble, startOpenAiDouble } from '../helpers/ai-doubles';
import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Body = Record<string, unknown>;
type Data<T = Body> = { data: T; message?: string };

/** /platform/ai-providers and GET /builder/providers over HTTP, with the provider doubles on loopback. */
describe('AI provider routes', () => {
  let h: Harness;
  let openai: ProviderDouble;
  let anthropic: ProviderDouble;

  beforeAll(async () => {
    h = await startHarness(
      'ai-providers-routes',
      { ALLOW_PRIVATE_AI_PROVIDERS: 'true', RATE_LIMIT_PLATFORM_PER_15MIN: '100000' },
      { worker: false },
    );
    openai = await startOpenAiDouble({ models: ['gpt-4o-mini', 'gpt-4o'] });
    anthropic = await startAnthropicDouble({ models: ['claude-sonnet-4-20250514'] });
  });
  afterAll(async () => {
    await openai?.close();
    await anthropic?.close();
    await h?.stop();
  });

  const provider = (d: ProviderDouble, kind: 'openai_compatible' | 'anthropic', over: Body = {}) => ({
    name: `${kind}-${randomUUID().slice(0, 6)}`,
    kind,
    baseUrl: d.baseUrl,
    apiKey: d.apiKey,
    defaultModel: kind === 'anthropic' ? 'claude-sonnet-4-20250514' : 'gpt-4o-mini',
    ...over,
  });

  it('adds, lists, changes, tests and removes providers; the key never comes back', async () => {
    const o = await h.newOrg();
    const api = client(h, o.token);
    const created = await api.post<Data>(
      '/platform/ai-providers',
      provider(openai, 'openai_compatible', { models: ['gpt-4o'] }),
    );
    expect(created.status).toBe(200);
    const id = created.body.data.id as string;
    expect(JSON.stringify(created.body)).not.toContain(openai.apiKey);
    const claude = (await api.post<Data>('/platform/ai-providers', provider(anthropic, 'anthropic'))).body.data
      .id as string;

    const list = await api.get<Data<Body[]>>('/platform/ai-providers');
    expect(list.body.data.map((p) => p.id).sort()).toEqual([id, claude].sort());
    expect(JSON.stringify(list.body)).not.toMatch(new RegExp(`${openai.apiKey}|${anthropic.apiKey}`));

    for (const [pid, models] of [
      [id, ['gpt-4o-mini', 'gpt-4o']],
      [claude, ['claude-sonnet-4-20250514']],
    ] as const) {
      const tested = await api.post<Data>(`/platform/ai-providers/${pid}/test`);
      expect(tested.body.data).toEqual({ ok: true, models });
    }

    const rekeyed = await api.call<Data>('PATCH', `/platform/ai-providers/${id}`, { apiKey: 'sk-proj-wrong' });
    expect(rekeyed.status).toBe(200);
    const refused = await api.post<Data>(`/platform/ai-providers/${id}/test`);
    expect(refused.body.data).toEqual({
      ok: false,
      error: 'provider_auth',
      message: expect.stringContaining('refused the API key'),
    });
    expect(JSON.stringify(refused.body)).not.toContain('sk-proj-wrong');

    // The builder sees enabled providers only, and no key or address.
    await api.call('PATCH', `/platform/ai-providers/${claude}`, { enabled: false });
    const forBuilder = await api.get<Data<Body[]>>('/platform/builder/providers');
    expect(forBuilder.body.data).toEqual([
      { id, name: expect.any(String), kind: 'openai_compatible', defaultModel: 'gpt-4o-mini', models: ['gpt-4o'] },
    ]);

    expect(
      (
        await api.post(
          '/platform/ai-providers',
          provider(openai, 'openai_compatible', { name: created.body.data.name }),
        )
      ).status,
    ).toBe(409);
    expect((await api.del(`/platform/ai-providers/${id}`)).status).toBe(204);
    expect((await api.get(`/platform/ai-providers/${id}`)).status).toBe(404);
  });

  it('is for owners and admins only, and another organisation’s provider is 404', async () => {
    const o = await h.newOrg();
    const owner = client(h, o.token);
    const id = (await owner.post<Data>('/platform/ai-providers', provider(openai, 'openai_compatible'))).body.data
      .id as string;
    const dev = await h.identity.addUser({ orgId: o.orgId, email: `${randomUUID()}@x.invalid`, role: 'developer' });
    const devApi = client(
      h,
      (await h.identity.createToken({ orgId: o.orgId, userId: dev._id, name: 'd', scopes: ['ai_provider.manage'] }))
        .token,
    );
    expect((await devApi.get('/platform/ai-providers')).status).toBe(403);
    expect((await devApi.post(`/platform/ai-providers/${id}/test`)).status).toBe(403);
    // A developer still sees what the builder may use.
    expect((await devApi.get<Data<Body[]>>('/platform/builder/providers')).body.data.map((p) => p.id)).toEqual([id]);

    const other = client(h, (await h.newOrg()).token);
    for (const [method, body] of [['GET'], ['PATCH', { enabled: false }], ['DELETE'], ['POST']] as const) {
      const path = method === 'POST' ? `/platform/ai-providers/${id}/test` : `/platform/ai-providers/${id}`;
      expect([method, (await other.call(method, path, body)).status]).toEqual([method, 404]);
    }
    expect((await other.get<Data<Body[]>>('/platform/builder/providers')).body.data).toEqual([]);
    expect((await owner.get<Data>(`/platform/ai-providers/${id}`)).body.data.enabled).toBe(true);
  });
});
