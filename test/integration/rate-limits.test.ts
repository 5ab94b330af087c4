import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

describe('rate limits (counters in MongoDB, shared by api processes)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('limits', {
      RATE_LIMIT_COMPAT_READS_PER_MIN: '3',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '2',
      RATE_LIMIT_PLATFORM_PER_15MIN: '3',
    });
  });
  afterAll(() => h?.stop());

  it('counts an organisation’s reads across tokens and api processes, then answers 429 with Retry-After', async () => {
    const org = await h.newOrg();
    const second = await h.identity.createToken({
      orgId: org.orgId,
      userId: org.userId,
      name: 'two',
      scopes: ['deployment.read'],
    });
    const otherApi = await h.secondApi();
    const before = Math.floor(Date.now() / 1000);

    const first = await client(h, org.token).get('/compat/deployments');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(before + 59);
    expect(reset).toBeLessThanOrEqual(before + 62);

    expect((await client(h, second.token).get('/compat/providers')).headers.get('x-ratelimit-remaining')).toBe('1');
    const viaOther = await client({ ...h, baseUrl: otherApi }, org.token).get('/compat/deployments');
    expect(viaOther.headers.get('x-ratelimit-remaining')).toBe('0');

    const limited = await client(h, org.token).get<{ code: string; details: { retryAfterSeconds: number } }>(
      '/compat/deployments',
    );
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMIT_EXCEEDED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body.details.retryAfterSeconds).toBe(retryAfter);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');

    // Another organisation has its own budget.
    expect((await client(h, (await h.newOrg()).token).get('/compat/deployments')).status).toBe(200);
  });

  it('limits deploy and delete together per organisation, separately from reads', async () => {
    const api = client(h, (await h.newOrg()).token);
    const bad = { image: 'x', name: 'Bad Name' };
    expect((await api.post('/compat/deploy', bad)).status).toBe(400);
    expect((await api.del('/compat/deployments/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const third = await api.post<{ code: string }>('/compat/deploy', bad);
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(third.headers.get('x-ratelimit-limit')).toBe('2');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(60);
    expect((await api.get('/compat/deployments')).status).toBe(200);
  });

  it('puts the headers on refused-token responses and unknown routes too', async () => {
    const r = await client(h, 'svc_bogus').get('/compat/deployments');
    expect(r.status).toBe(401);
    expect(r.headers.get('x-ratelimit-limit')).toBe('3');
    const missing = await client(h, (await h.newOrg()).token).get<{ code: string }>('/compat/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('INVALID_REQUEST');
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('limits the platform API per token, answering PlatformError with Retry-After', async () => {
    const api = client(h, (await h.newOrg()).token);
    for (let i = 0; i < 3; i++) expect((await api.get('/platform/tokens')).status).toBe(200);
    const limited = await api.get('/platform/tokens');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ status: 'error', message: expect.stringMatching(/retry after/) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
