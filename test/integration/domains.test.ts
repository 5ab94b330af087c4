import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';

import { request } from 'undici';

import { client } from '../helpers/client';
import { startDnsServer } from '../helpers/dns-server';
import { edgeAgent } from '../helpers/edge';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { connectAgent } from '../helpers/mcp';
import { runReconcileSchedule } from '../helpers/reconcile';

interface DnsRecord {
  type: string;
  name: string;
  value: string;
  purpose: string;
}
interface Domain {
  id: string;
  hostname: string;
  status: string;
  routed: boolean;
  url: string;
  token: string;
  dnsRecords: DnsRecord[];
  lastCheck: { at: string; txt: string; routing: string; message: string } | null;
}
type Api = ReturnType<typeof client>;

/**
 * Custom domains end to end: a real DNS server on loopback that the api and the worker ask (DNS_RESOLVERS), records
 * added and removed as an owner would, the domain workflow checking in the background, and the deployment served at
 * the domain over HTTPS by the stack's Caddy with a certificate of its local CA, which the client alone trusts.
 */
describe('custom domains', () => {
  let h: Harness;
  let dns: Awaited<ReturnType<typeof startDnsServer>>;
  let image: string;
  let ca: string;
  const agent = edgeAgent();

  beforeAll(async () => {
    dns = await startDnsServer();
    h = await startHarness('domains', {
      DNS_RESOLVERS: dns.address,
      DNS_TIMEOUT_MS: '1000',
      // The background checks every second or two, so a test sees them without waiting minutes.
      DOMAIN_CHECK_FIRST_S: '1',
      DOMAIN_CHECK_MAX_S: '2',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      DEPLOY_READY_TIMEOUT_S: '30',
    });
    image = await buildFixtureImage(h.docker, 'env-hello');
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await dns?.close();
    await agent.close();
  });

  async function deploy(api: Api) {
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image,
      name: `dom-${randomUUID().slice(0, 6)}`,
      port: 8080,
      envVars: { GREETING: 'one' },
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.deploymentId;
    const running = (await api.waitFor(id, ['running', 'failed'], 120_000)) as { status: string; url: string };
    expect(running.status).toBe('running');
    return { id, url: running.url, host: new URL(running.url).hostname };
  }

  async function newOrg() {
    const org = await h.newOrg('pro');
    return { ...org, api: client(h, org.token) };
  }

  const hostname = () => `shop-${randomUUID().slice(0, 8)}.example.test`;
  const get = async (api: Api, id: string) => (await api.get<{ data: Domain }>(`/platform/domains/${id}`)).body.data;

  /** The stack's Caddy keeps its local CA's root here; the client trusts it and nothing else. */
  async function rootCa(): Promise<string> {
    ca ??= await eventually(
      () =>
        fs
          .readFile(
            path.join(
              process.env.SLIPWAY_TEST_DATA_DIR!,
              'caddy',
              'storage',
              'pki',
              'authorities',
              'local',
              'root.crt',
            ),
            'utf8',
          )
          .catch(() => undefined),
      "Caddy's local CA root",
    );
    return ca;
  }

  /** GET https://<host>:<EDGE_TLS_PORT>/ on 127.0.0.1, the host as SNI and Host, verified against the CA only. */
  async function httpsGet(host: string, pathname = '/'): Promise<{ status: number; body: string }> {
    const caPem = await rootCa();
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: h.config.EDGE_TLS_PORT,
          path: pathname,
          servername: host,
          headers: { host },
          ca: caPem,
          agent: false,
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  const httpGet = async (url: string, host?: string) => {
    const res = await request(url, { dispatcher: agent, ...(host ? { headers: { host } } : {}) });
    return { status: res.statusCode, body: await res.body.text() };
  };

  it('claims, verifies and serves a domain over HTTPS, through a redeploy, until it is deleted', async () => {
    const { api } = await newOrg();
    const d = await deploy(api);
    const host = hostname();

    const created = await api.post<{ data: Domain }>('/platform/domains', {
      hostname: host.toUpperCase(),
      deploymentId: d.id,
    });
    expect(created.status).toBe(201);
    const domain = created.body.data;
    expect(domain).toMatchObject({ hostname: host, status: 'pending', routed: false });
    expect(domain.url).toBe(`https://${host}:${h.config.EDGE_TLS_PORT}`);
    expect(domain.dnsRecords).toEqual([
      { type: 'TXT', name: `_slipway-challenge.${host}`, value: domain.token, purpose: 'ownership' },
      { type: 'CNAME', name: host, value: d.host, purpose: 'routing' },
    ]);

    // The workflow's first check, at once: nothing in DNS yet.
    const first = await eventually(async () => (await get(api, domain.id)).lastCheck ?? undefined, 'the first check');
    expect(first).toMatchObject({ txt: 'missing', routing: 'missing' });
    expect(first.message).toMatch(
      new RegExp(`TXT record _slipway-challenge\\.${host.replace(/\./g, '\\.')} not found`),
    );

    dns.add('TXT', `_slipway-challenge.${host}`, domain.token);
    dns.add('CNAME', host, d.host);
    const verified = await api.post<{ data: Domain }>(`/platform/domains/${domain.id}/verify`);
    expect(verified.status).toBe(200);
    expect(verified.headers.get('x-ratelimit-limit')).toBe('3');
    expect(verified.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(verified.body.data).toMatchObject({ status: 'verified', lastCheck: { txt: 'found', routing: 'cname' } });
    await eventually(async () => ((await get(api, domain.id)).routed ? true : undefined), 'the domain to be routed');

    // Served over HTTPS with a certificate for the domain from Caddy's local CA: the body is the app's, as its
    // stable URL serves it.
    const stable = await httpGet(d.url);
    expect(stable.status).toBe(200);
    const served = await eventually(async () => {
      const r = await httpsGet(host);
      return r.status === 200 ? r : undefined;
    }, 'the domain to answer over HTTPS');
    expect(served.body).toBe(stable.body);
    // The app sees its stable host as Host, and the domain and scheme in the forwarded headers.
    const env = await httpsGet(host, '/env');
    expect(env.body.split('\n')).toEqual(expect.arrayContaining(['GREETING']));
    // Domains are served over HTTPS only: the HTTP port does not know the domain.
    expect((await httpGet(`http://127.0.0.1:${h.config.EDGE_PORT}/`, host)).status).toBe(404);

    // The router lost the domain's route (a restart loads no config): the reconciler puts it back.
    const removed = await request(`${h.config.EDGE_ADMIN_URL}/id/slipway-domain-${domain.id}`, { method: 'DELETE' });
    await removed.body.text();
    expect(removed.statusCode).toBe(200);
    expect((await httpsGet(host).catch((err: Error) => ({ status: 0, body: err.message }))).status).not.toBe(200);
    // The sweep covers every domain of the shared stack: another file's may be restored beside this one.
    expect((await runReconcileSchedule(h)).restored?.domains).toBeGreaterThanOrEqual(1);
    expect((await httpsGet(host)).body).toBe(stable.body);

    // A redeploy: new containers behind the same stable host, and the domain follows without being touched.
    const redeploy = await api.post(`/platform/deployments/${d.id}/redeploy`, { envVars: { GREETING: 'two' } });
    expect(redeploy.status).toBe(202);
    await eventually(
      async () => {
        const s = (await api.get<{ status: string; revision?: number }>(`/compat/deployments/${d.id}`)).body;
        const r = (await api.get<{ data: { revision: number; status: string } }>(`/platform/deployments/${d.id}`)).body
          .data;
        return s.status === 'running' && r.revision === 2 ? true : undefined;
      },
      'the redeploy',
      120_000,
    );
    const after = await httpGet(d.url);
    expect(after.body).not.toBe(stable.body);
    await eventually(async () => {
      const r = await httpsGet(host);
      return r.status === 200 && r.body === after.body ? true : undefined;
    }, 'the domain to serve the new release');

    // Stopped, the router's stopped page answers at the domain too; started, the app again.
    expect((await api.post(`/platform/deployments/${d.id}/stop`)).status).toBe(202);
    await eventually(async () => ((await httpsGet(host)).status === 503 ? true : undefined), 'the stopped page');
    expect((await api.post(`/platform/deployments/${d.id}/start`)).status).toBe(202);
    await eventually(async () => ((await httpsGet(host)).status === 200 ? true : undefined), 'the app again', 120_000);

    // Deleted: the route leaves the router; the host is no longer served.
    expect((await api.del(`/platform/domains/${domain.id}`)).status).toBe(200);
    expect((await api.get(`/platform/domains/${domain.id}`)).status).toBe(404);
    await eventually(async () => {
      const r = await httpsGet(host).catch((err: Error) => ({ status: 0, body: err.message }));
      return r.status !== 200 ? r : undefined;
    }, 'the domain to stop being served');
    // Each change is in the audit trail, named by the domain's id.
    type Ev = { action: string; resource: { id: string | null } };
    const trail = (await api.get<{ data: { events: Ev[] } }>('/platform/audit?limit=100')).body.data.events;
    const ours = trail.filter((e) => e.resource.id === domain.id).map((e) => e.action);
    expect(ours).toEqual(expect.arrayContaining(['domain.create', 'domain.verify', 'domain.delete']));
    await api.destroyAndWait(d.id);
  }, 600_000);

  it('keeps a domain pending while its TXT record is missing or wrong, in the background too', async () => {
    const { api } = await newOrg();
    const d = await deploy(api);
    const host = hostname();
    const domain = (await api.post<{ data: Domain }>('/platform/domains', { hostname: host, deploymentId: d.id })).body
      .data;
    // Added, then removed before any verify.
    dns.add('TXT', `_slipway-challenge.${host}`, domain.token);
    dns.remove('TXT', `_slipway-challenge.${host}`);
    const missing = await api.post<{ data: Domain }>(`/platform/domains/${domain.id}/verify`);
    expect(missing.status).toBe(200);
    expect(missing.body.data).toMatchObject({ status: 'pending', routed: false, lastCheck: { txt: 'missing' } });
    expect(missing.body.data.lastCheck!.message).toMatch(/not found/);

    dns.add('TXT', `_slipway-challenge.${host}`, 'slipway-verify=someone-else');
    const other = await api.post<{ data: Domain }>(`/platform/domains/${domain.id}/verify`);
    expect(other.body.data).toMatchObject({ status: 'pending', lastCheck: { txt: 'other' } });
    expect(other.body.data.lastCheck!.message).toMatch(/holds another value/);

    // The workflow goes on checking on its own (no verify), and finds the same.
    const seen = other.body.data.lastCheck!.at;
    const later = await eventually(async () => {
      const c = (await get(api, domain.id)).lastCheck;
      return c && c.at > seen ? c : undefined;
    }, 'a background check');
    expect(later.txt).toBe('other');
    expect((await get(api, domain.id)).status).toBe('pending');
    expect((await httpsGet(host).catch((err: Error) => ({ status: 0, body: err.message }))).status).not.toBe(200);
    await api.destroyAndWait(d.id);
    // A destroyed deployment takes its domains with it.
    await eventually(
      async () => ((await api.get(`/platform/domains/${domain.id}`)).status === 404 ? true : undefined),
      'the domain to go',
    );
  }, 300_000);

  it('refuses a wildcard and another organisation’s verified host; a pending claim blocks no one', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const [da, db] = [await deploy(a.api), await deploy(b.api)];
    const wildcard = await a.api.post<{ message: string }>('/platform/domains', {
      hostname: '*.example.test',
      deploymentId: da.id,
    });
    expect(wildcard.status).toBe(400);
    expect(wildcard.body.message).toMatch(/wildcard/);
    const own = await a.api.post<{ message: string }>('/platform/domains', {
      hostname: `x.${da.host}`,
      deploymentId: da.id,
    });
    expect(own.status).toBe(400);
    expect(own.body.message).toMatch(/under localhost/);

    // B claims first, but does not prove it; A proves it and wins.
    const host = hostname();
    const bClaim = (await b.api.post<{ data: Domain }>('/platform/domains', { hostname: host, deploymentId: db.id }))
      .body.data;
    const aClaim = await a.api.post<{ data: Domain }>('/platform/domains', { hostname: host, deploymentId: da.id });
    expect(aClaim.status).toBe(201);
    const again = await a.api.post<{ message: string }>('/platform/domains', { hostname: host, deploymentId: da.id });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/already added in this organisation/);
    dns.add('TXT', `_slipway-challenge.${host}`, aClaim.body.data.token);
    const aVerified = await a.api.post<{ data: Domain }>(`/platform/domains/${aClaim.body.data.id}/verify`);
    expect(aVerified.body.data.status).toBe('verified');

    // B's token beside A's in DNS changes nothing: the host is A's.
    dns.add('TXT', `_slipway-challenge.${host}`, bClaim.token);
    const bVerify = await b.api.post<{ message: string }>(`/platform/domains/${bClaim.id}/verify`);
    expect(bVerify.status).toBe(409);
    expect(bVerify.body.message).toMatch(/verified by another organisation/);
    expect((await get(b.api, bClaim.id)).status).toBe('pending');
    const bAgain = await b.api.post<{ message: string }>('/platform/domains', {
      hostname: `www.${host}`,
      deploymentId: db.id,
    });
    expect(bAgain.status).toBe(201); // a name under A's host is another host
    const bSame = await b.api.post<{ message: string }>('/platform/domains', { hostname: host, deploymentId: db.id });
    expect(bSame.status).toBe(409);
    // A's domain is served, B's pending record is not.
    await eventually(async () => ((await get(a.api, aClaim.body.data.id)).routed ? true : undefined), 'A routed');
    await eventually(async () => ((await httpsGet(host)).status === 200 ? true : undefined), 'A served');
    // Destroying A's deployment takes its domain, its route and its claim: the host is free again.
    await a.api.destroyAndWait(da.id);
    await eventually(
      async () => ((await a.api.get(`/platform/domains/${aClaim.body.data.id}`)).status === 404 ? true : undefined),
      "A's domain to go with its deployment",
    );
    const gone = await httpsGet(host).catch((err: Error) => ({ status: 0, body: err.message }));
    expect(gone.status).not.toBe(200);
    const bNow = await b.api.post<{ data: Domain }>(`/platform/domains/${bClaim.id}/verify`);
    expect(bNow.status).toBe(200);
    expect(bNow.body.data.status).toBe('verified');
    await b.api.destroyAndWait(db.id);
  }, 600_000);

  it('lets exactly one of two organisations verifying the same host at once have it', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const [da, db] = [await deploy(a.api), await deploy(b.api)];
    const host = hostname();
    const claims = await Promise.all([
      a.api.post<{ data: Domain }>('/platform/domains', { hostname: host, deploymentId: da.id }),
      b.api.post<{ data: Domain }>('/platform/domains', { hostname: host, deploymentId: db.id }),
    ]);
    for (const c of claims) dns.add('TXT', `_slipway-challenge.${host}`, c.body.data.token);
    const [va, vb] = await Promise.all([
      a.api.post<{ data: Domain }>(`/platform/domains/${claims[0]!.body.data.id}/verify`),
      b.api.post<{ data: Domain }>(`/platform/domains/${claims[1]!.body.data.id}/verify`),
    ]);
    expect([va.status, vb.status].sort()).toEqual([200, 409]);
    const winner = va.status === 200 ? va : vb;
    expect(winner.body.data.status).toBe('verified');
    const statuses = [
      (await get(a.api, claims[0]!.body.data.id)).status,
      (await get(b.api, claims[1]!.body.data.id)).status,
    ];
    expect(statuses.sort()).toEqual(['pending', 'verified']);
    await a.api.destroyAndWait(da.id);
    await b.api.destroyAndWait(db.id);
  }, 300_000);

  it('frees a host whose claim outlived its domain (a delete that stopped halfway)', async () => {
    const { api } = await newOrg();
    const d = await deploy(api);
    const host = hostname();
    // What a delete leaves when it stops after removing the record and before the claim.
    await h.db.collection('domain_claims').insertOne({
      _id: host as never,
      orgId: randomUUID(),
      domainId: randomUUID(),
      deploymentId: randomUUID(),
      at: new Date(),
    });
    const claimed = await api.post<{ data: Domain }>('/platform/domains', { hostname: host, deploymentId: d.id });
    expect(claimed.status).toBe(201);
    dns.add('TXT', `_slipway-challenge.${host}`, claimed.body.data.token);
    const verified = await api.post<{ data: Domain }>(`/platform/domains/${claimed.body.data.id}/verify`);
    expect(verified.body.data.status).toBe('verified');
    expect(await h.db.collection('domain_claims').findOne({ _id: host as never })).toMatchObject({
      domainId: claimed.body.data.id,
    });
    await api.destroyAndWait(d.id);
  }, 300_000);

  it('limits verification to 3 per 5 minutes per user: the 4th is 429 with Retry-After', async () => {
    const { api } = await newOrg();
    const d = await deploy(api);
    const domain = (await api.post<{ data: Domain }>('/platform/domains', { hostname: hostname(), deploymentId: d.id }))
      .body.data;
    for (const remaining of ['2', '1', '0']) {
      const r = await api.post(`/platform/domains/${domain.id}/verify`);
      expect([r.status, r.headers.get('x-ratelimit-remaining')]).toEqual([200, remaining]);
    }
    const fourth = await api.post<{ message: string }>(`/platform/domains/${domain.id}/verify`);
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(fourth.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    expect(fourth.body.message).toMatch(/3 domain verifications per user per 5 minutes/);
    // The budget as GET /platform/tokens/current reads it, without spending.
    const me = await api.get<{ data: { limits: Record<string, { remaining: number; limit: number; per: string }> } }>(
      '/platform/tokens/current',
    );
    expect(me.body.data.limits.domainVerification).toMatchObject({ limit: 3, remaining: 0, per: 'user' });
    await api.destroyAndWait(d.id);
  }, 300_000);

  it('adds, lists, verifies and removes a domain through MCP tools', async () => {
    const org = await newOrg();
    const d = await deploy(org.api);
    const { client: mcp, call } = await connectAgent(h.baseUrl, org.token);
    try {
      const host = hostname();
      const added = await call('add_domain', { hostname: host, deploymentId: d.id });
      expect(added.isError).toBe(false);
      expect(added.s.domain).toMatchObject({ hostname: host, status: 'pending' });
      expect(added.s.next).toMatchObject({ tool: 'verify_domain' });
      const id = added.s.domain.id as string;
      const refused = await call('add_domain', { hostname: '*.example.test', deploymentId: d.id });
      expect(refused.isError).toBe(true);
      expect(refused.s.code).toBe('INVALID_REQUEST');

      dns.add('TXT', `_slipway-challenge.${host}`, added.s.domain.token as string);
      const verified = await call('verify_domain', { domainId: id });
      expect(verified.s.domain).toMatchObject({ status: 'verified' });
      // The same budget as the REST route's, which whoami reads.
      expect((await call('whoami', {})).s.budgets.domainVerification).toMatchObject({ limit: 3, remaining: 2 });
      const listed = await call('list_domains', { deploymentId: d.id });
      expect(listed.s.domains.map((x: { id: string }) => x.id)).toEqual([id]);

      const preview = await call('remove_domain', { domainId: id });
      expect(preview.s).toMatchObject({ removed: false, next: { tool: 'remove_domain' } });
      expect((await get(org.api, id)).hostname).toBe(host);
      const wrong = await call('remove_domain', { domainId: id, confirm: '1.bad' });
      expect(wrong.isError).toBe(true);
      const removed = await call('remove_domain', { domainId: id, confirm: preview.s.confirm as string });
      expect(removed.s).toMatchObject({ removed: true });
      expect((await org.api.get(`/platform/domains/${id}`)).status).toBe(404);
    } finally {
      await mcp.close();
    }
    await org.api.destroyAndWait(d.id);
  }, 300_000);
});
