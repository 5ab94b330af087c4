import { randomUUID } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { createDeploymentStore } from '@shared/deployments/store';

import { type ApiResponse, client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { readResult } from '../helpers/mcp';

type Body = { code?: string; error?: string; message?: string; details?: Record<string, unknown> };

/**
 * A refusal names its budget in words and when to retry, the seconds matching Retry-After: compat says it in
 * `error`, the platform in `message`, the entitlement lookup in `error`.
 */
function expectWords(r: ApiResponse<Body>, budget: string) {
  expect(r.status).toBe(429);
  const retryAfter = r.headers.get('retry-after');
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(r.body.error ?? r.body.message).toBe(`${budget}; retry after ${retryAfter} s`);
}

/** An MCP client over HTTP, as an agent connects, and one tools/call's answer as an agent reads it. */
async function mcp(h: Harness, token: string) {
  const c = new Client({ name: 'rate-limits-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    return readResult((await c.callTool({ name, arguments: args })) as CallToolResult);
  };
  return { c, call };
}

/** Fires `n` requests at once and tallies the statuses. */
async function burst(n: number, send: () => Promise<ApiResponse<Body>>) {
  const all = await Promise.all(Array.from({ length: n }, send));
  const tally: Record<number, number> = {};
  for (const r of all) tally[r.status] = (tally[r.status] ?? 0) + 1;
  return { all, tally, refused: all.filter((r) => r.status === 429) };
}

/** Every refusal is the interface's: RATE_LIMIT_EXCEEDED with a Retry-After no longer than the window. */
function expectRefusals(refused: ApiResponse<Body>[], limit: number, windowS: number) {
  for (const r of refused) {
    expect(r.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(limit));
    const retryAfter = Number(r.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(windowS);
  }
}

describe('rate limits (counters in Redis, shared by api processes)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(
      'limits',
      {
        RATE_LIMIT_COMPAT_READS_PER_MIN: '3',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '2',
        RATE_LIMIT_PLATFORM_PER_15MIN: '3',
        RATE_LIMIT_MCP_PER_5MIN: '3',
      },
      { worker: false },
    );
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
    expectWords(limited, '3 compatibility API reads per organisation per minute');

    // Another organisation has its own budget.
    expect((await client(h, (await h.newOrg()).token).get('/compat/deployments')).status).toBe(200);
  });

  it('limits deploy and delete together per organisation, separately from reads', async () => {
    const api = client(h, (await h.newOrg()).token);
    const bad = { image: 'x', name: 'Bad Name' };
    expect((await api.post('/compat/deploy', bad)).status).toBe(400);
    expect((await api.del('/compat/deployments/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const third = await api.post<Body>('/compat/deploy', bad);
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(third.headers.get('x-ratelimit-limit')).toBe('2');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(60);
    expectWords(third, '2 compatibility API deploys and deletes per organisation per hour');
    expect((await api.get('/compat/deployments')).status).toBe(200);
  });

  it('refuses an address that keeps presenting bad tokens with 429, after its budget of 401s', async () => {
    // The anonymous budget is the reads' (3 here): three 401s, counted down, then the address is told to stop.
    const bogus = client(h, 'svc_bogus');
    for (const remaining of ['2', '1', '0']) {
      const r = await bogus.get<Body>('/compat/deployments');
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('INVALID_TOKEN');
      expect(r.headers.get('x-ratelimit-limit')).toBe('3');
      expect(r.headers.get('x-ratelimit-remaining')).toBe(remaining);
    }
    const refused = await bogus.get<Body>('/compat/deployments');
    expect(refused.status).toBe(429);
    expectRefusals([refused], 3, 60);
    expectWords(refused, '3 compatibility API requests with a missing or refused token per client address per minute');
    // A valid token from the same address is not locked out by someone else's bad tokens.
    expect((await client(h, (await h.newOrg()).token).get('/compat/providers')).status).toBe(200);
  });

  it('puts the headers on unknown routes too', async () => {
    const missing = await client(h, (await h.newOrg()).token).get<{ code: string }>('/compat/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('INVALID_REQUEST');
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('limits the platform API per token, answering PlatformError with Retry-After', async () => {
    const api = client(h, (await h.newOrg()).token);
    for (let i = 0; i < 3; i++) expect((await api.get('/platform/tokens')).status).toBe(200);
    const limited = await api.get<Body>('/platform/tokens');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ status: 'error', message: expect.any(String) });
    expectWords(limited, '3 platform API requests per token per 15 minutes');
  });

  it('limits zip uploads per organisation, in their own words', async () => {
    const api = client(h, (await h.newOrg()).token);
    // Not multipart: refused after the limit, so each still spends an upload.
    for (let i = 0; i < 2; i++) expect((await api.post('/compat/uploads/zip', {})).status).toBe(400);
    expectWords(await api.post<Body>('/compat/uploads/zip', {}), '2 zip uploads per organisation per hour');
  });

  it('over MCP: a refused tools/call and a refused request name the MCP budget in words', async () => {
    const { c, call } = await mcp(h, (await h.newOrg()).token);
    // initialize spent one of the 3; two calls spend the rest.
    for (let i = 0; i < 2; i++) expect((await call('list_deployments', { limit: 1 })).isError).toBe(false);
    const refused = await call('list_deployments', { limit: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.s).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryable: true });
    expect(refused.s.message).toBe(
      `3 MCP requests per token per 5 minutes; retry after ${String(refused.s.retryAfterS)} s`,
    );
    await expect(c.listTools()).rejects.toMatchObject({
      code: 429,
      message: expect.stringMatching(/3 MCP requests per token per 5 minutes; retry after \d+ s/),
    });
    await c.close();

    // Bad tokens spend their address's budget of the same size; past it, the refusal says whose budget that is.
    for (let i = 0; i < 3; i++) await expect(mcp(h, `svc_${randomUUID()}`)).rejects.toThrow(/INVALID_TOKEN/);
    await expect(mcp(h, `svc_${randomUUID()}`)).rejects.toThrow(
      /3 MCP requests with a missing or refused token per client address per 5 minutes; retry after \d+ s/,
    );
  });
});

/**
 * The interface's limits at their real sizes, each hit by 200 requests at once: every limit admits exactly its size.
 * (With counters in FerretDB, 130 concurrent platform requests all passed a limit of 100.)
 */
describe('rate limits under concurrent bursts (the interface defaults)', () => {
  let h: Harness;
  const N = 200;

  beforeAll(async () => {
    h = await startHarness('limits-burst', {}, { worker: false });
  });
  afterAll(() => h?.stop());

  it('platform: 100 of 200 concurrent requests per token', async () => {
    const api = client(h, (await h.newOrg()).token);
    const { tally, refused } = await burst(N, () => api.get<Body>('/platform/tokens'));
    expect(tally).toEqual({ 200: 100, 429: 100 });
    for (const r of refused) expectWords(r, '100 platform API requests per token per 15 minutes');
  });

  it('compat reads: 60 of 200 concurrent reads per organisation', async () => {
    const api = client(h, (await h.newOrg()).token);
    const { tally, refused } = await burst(N, () => api.get<Body>('/compat/providers'));
    expect(tally).toEqual({ 200: 60, 429: 140 });
    expectRefusals(refused, 60, 60);
    for (const r of refused) expectWords(r, '60 compatibility API reads per organisation per minute');
  });

  it('compat writes: 20 of 200 concurrent deletes per organisation', async () => {
    const api = client(h, (await h.newOrg()).token);
    // A delete of an unknown ID spends a write and starts nothing.
    const { tally, refused } = await burst(N, () => api.del<Body>(`/compat/deployments/${randomUUID()}`));
    expect(tally).toEqual({ 404: 20, 429: 180 });
    expectRefusals(refused, 20, 3600);
    for (const r of refused) expectWords(r, '20 compatibility API deploys and deletes per organisation per hour');
  });

  it('deployment creation: 10 of 200 concurrent deploys per user', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const { tally, refused } = await burst(N, () =>
      api.post<Body>('/compat/deploy', { image: 'slipway-test/limits:1', name: 'burst' }),
    );
    // The org's 20 writes pass first; of those, the user's creation budget admits 10.
    expect(tally).toEqual({ 202: 10, 429: 190 });
    const byCreations = refused.filter((r) => r.headers.get('x-ratelimit-limit') === '10');
    expect(byCreations).toHaveLength(10);
    for (const r of byCreations) expectWords(r, '10 deployment creations per user per 15 minutes');
    for (const r of refused.filter((r) => r.headers.get('x-ratelimit-limit') === '20'))
      expectWords(r, '20 compatibility API deploys and deletes per organisation per hour');
    const records = await createDeploymentStore(h.db).list({ orgId: org.orgId, limit: 100, offset: 0 });
    expect(records.total).toBe(10);
  });

  it('deployment creation: /deploy and /deploy/source spend one budget per user, not per organisation', async () => {
    const org = await h.newOrg();
    const owner = client(h, org.token);
    for (let i = 0; i < 10; i++) {
      // Refused by validation, after the limiter: it still counts, as every limit counts attempts.
      const r = await owner.post<Body>('/compat/deploy/source', {});
      expect(r.status).toBe(400);
      // Two limits apply (the org's 20 writes, the user's 10 creations): the headers show the one closer to its end.
      expect([r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-remaining')]).toEqual([
        '10',
        String(9 - i),
      ]);
    }
    const over = await owner.post<Body>('/compat/deploy', { image: 'slipway-test/limits:1', name: 'eleventh' });
    expect(over.status).toBe(429);
    expectRefusals([over], 10, 900);
    expectWords(over, '10 deployment creations per user per 15 minutes');

    const dev = await h.identity.addUser({ orgId: org.orgId, email: `dev@${org.orgId}.invalid`, role: 'developer' });
    const token = await h.identity.createToken({
      orgId: org.orgId,
      userId: dev._id,
      name: 'dev',
      scopes: ['deployment.create'],
    });
    const r = await client(h, token.token).post<Body>('/compat/deploy/source', {});
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('INVALID_REQUEST');
  });

  it('bad tokens: each origin answers 429 once the address spent its budget', async () => {
    const compat = await burst(N, () => client(h, `svc_${randomUUID()}`).get<Body>('/compat/deployments'));
    expect(compat.tally).toEqual({ 401: 60, 429: 140 });
    expectRefusals(compat.refused, 60, 60);
    for (const r of compat.refused)
      expectWords(r, '60 compatibility API requests with a missing or refused token per client address per minute');
    const platform = await burst(N, () => client(h, `svc_${randomUUID()}`).get<Body>('/platform/tokens'));
    expect(platform.tally).toEqual({ 401: 100, 429: 100 });
    for (const r of platform.refused)
      expectWords(r, '100 platform API requests with a missing or refused token per client address per 15 minutes');
  });

  it('entitlement lookup: 120 of 200 per key; a rotated key and another seller’s key have their own', async () => {
    const seller = client(h, (await h.newOrg()).token);
    const newKey = async (api = seller) =>
      (await api.post<{ data: { apiKey: string } }>('/platform/sales/api-keys')).body.data.apiKey;
    const lookup = (key: string) => async (): Promise<ApiResponse<Body>> => {
      const r = await fetch(`${h.baseUrl}/api/v1/entitlements?email=buyer%40example.com`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return { status: r.status, headers: r.headers, body: (await r.json()) as Body };
    };
    const first = await newKey();
    const byKey = await burst(N, lookup(first));
    expect(byKey.tally).toEqual({ 200: 120, 429: 80 });
    for (const r of byKey.refused) expectWords(r, '120 entitlement lookups per API key per minute');
    const rotated = await newKey();
    expect((await burst(N, lookup(rotated))).tally).toEqual({ 200: 120, 429: 80 });
    const otherSeller = await newKey(client(h, (await h.newOrg()).token));
    expect((await burst(N, lookup(otherSeller))).tally).toEqual({ 200: 120, 429: 80 });
    // The first key stopped working when it was rotated: wrong keys spend their address's budget, then are refused.
    const wrongKey = await burst(N, lookup(first));
    expect(wrongKey.tally).toEqual({ 401: 120, 429: 80 });
    for (const r of wrongKey.refused)
      expectWords(r, '120 entitlement lookups with a missing or wrong API key per client address per minute');
  });

  describe('a replayed requestId creates nothing and spends no creation', () => {
    const IMAGE = 'slipway-test/limits:1';
    type Limits = Record<string, { remaining: number }>;
    const limitsOf = async (api: ReturnType<typeof client>) =>
      (await api.get<{ data: { limits: Limits } }>('/platform/tokens/current')).body.data.limits;
    const duplicate = (requestId: string, deploymentId: string) =>
      `requestId "${requestId}" was already used: it made deployment ${deploymentId}, and no second deployment was ` +
      'started. Follow that deployment, or send a new requestId to deploy again.';

    it('compat: 409 DUPLICATE_REQUEST naming the first deployment, costing a read, never a write or a creation', async () => {
      const org = await h.newOrg();
      const api = client(h, org.token);
      const deploy = (requestId: string) =>
        api.post<Body & { deploymentId?: string }>('/compat/deploy', { image: IMAGE, name: 'replayed', requestId });
      const replay11 = async (requestId: string, deploymentId: string) => {
        for (let i = 0; i < 11; i++) {
          const r = await deploy(requestId);
          expect([r.status, r.body]).toEqual([
            409,
            {
              error: duplicate(requestId, deploymentId),
              code: 'DUPLICATE_REQUEST',
              details: { deploymentId, requestId },
            },
          ]);
        }
      };
      const first = await deploy('first');
      expect(first.status).toBe(202);
      const firstId = first.body.deploymentId!;
      for (let i = 1; i < 9; i++) expect((await deploy(`new-${i}`)).status).toBe(202);

      expect(await limitsOf(api)).toMatchObject({
        deployCreate: { remaining: 1 },
        compatWrites: { remaining: 11 },
        compatReads: { remaining: 60 },
      });
      await replay11('first', firstId);
      expect(await limitsOf(api)).toMatchObject({
        deployCreate: { remaining: 1 },
        compatWrites: { remaining: 11 },
        compatReads: { remaining: 49 },
      });

      // The tenth creation spends the last point; replays after it are still answered, not refused.
      expect((await deploy('new-9')).status).toBe(202);
      await replay11('first', firstId);
      expect(await limitsOf(api)).toMatchObject({ deployCreate: { remaining: 0 }, compatWrites: { remaining: 10 } });
      expectWords(await deploy('new-10'), '10 deployment creations per user per 15 minutes');
      const records = await createDeploymentStore(h.db).list({ orgId: org.orgId, limit: 100, offset: 0 });
      expect(records.total).toBe(10);
    });

    it('platform: 11 replays after 10 creations answer 409 naming the first, not 429', async () => {
      const org = await h.newOrg();
      const api = client(h, org.token);
      type Accepted = { data: { deployment: { id: string } } };
      const deploy = (requestId: string) =>
        api.post<Body & Accepted>('/platform/deployments', { image: IMAGE, name: 'replayed', requestId });
      const first = await deploy('first');
      expect(first.status).toBe(202);
      const firstId = first.body.data.deployment.id;
      for (let i = 1; i < 10; i++) expect((await deploy(`new-${i}`)).status).toBe(202);
      expect((await limitsOf(api)).deployCreate).toMatchObject({ remaining: 0 });

      for (let i = 0; i < 11; i++) {
        const r = await deploy('first');
        expect([r.status, r.body]).toEqual([409, { status: 'error', message: duplicate('first', firstId) }]);
      }
      expectWords(await deploy('new-10'), '10 deployment creations per user per 15 minutes');
      const records = await createDeploymentStore(h.db).list({ orgId: org.orgId, limit: 100, offset: 0 });
      expect(records.total).toBe(10);
    });

    it('MCP deploy: 11 replays after 10 creations are DUPLICATE_REQUEST results naming the first, not rate limits', async () => {
      const org = await h.newOrg();
      const { c, call } = await mcp(h, org.token);
      const deploy = (requestId: string) => call('deploy', { image: IMAGE, name: 'replayed', requestId, waitS: 0 });
      const first = await deploy('first');
      expect(first.isError).toBe(false);
      const firstId = first.s.deploymentId as string;
      for (let i = 1; i < 10; i++) expect((await deploy(`new-${i}`)).isError).toBe(false);

      for (let i = 0; i < 11; i++) {
        const r = await deploy('first');
        expect({ isError: r.isError, s: r.s }).toEqual({
          isError: true,
          s: {
            code: 'DUPLICATE_REQUEST',
            message: duplicate('first', firstId),
            retryable: false,
            next: expect.objectContaining({ tool: 'wait_for_deployment', arguments: { deploymentId: firstId } }),
            details: { deploymentId: firstId, requestId: 'first' },
          },
        });
      }
      const whoami = await call('whoami');
      expect(whoami.s).toMatchObject({ budgets: { deployCreate: { remaining: 0 } } });
      const over = await deploy('new-10');
      expect(over.s).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
      expect(over.s.message).toBe(
        `10 deployment creations per user per 15 minutes; retry after ${String(over.s.retryAfterS)} s`,
      );
      await c.close();
    });
  });
});
