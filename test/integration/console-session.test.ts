import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

interface Session {
  id: string;
  csrfToken: string;
  expiresAt: string;
}

/** What a browser does with the answer's Set-Cookie: the name=value pair it sends back, and the attributes. */
function cookieOf(res: Response): { pair: string; attributes: string[] } {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('slipway_session='));
  if (!header) throw new Error(`no session cookie in ${JSON.stringify(res.headers.getSetCookie())}`);
  const [pair, ...attributes] = header.split(';').map((s) => s.trim());
  return { pair: pair!, attributes };
}

describe('web console sessions: a token exchanged for an httpOnly cookie, CSRF on changes, sign-out', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('console-session', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' });
  });
  afterAll(() => h?.stop());

  async function open(token: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${h.baseUrl}/platform/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, ...headers },
    });
    const body = (await res.json()) as { status: string; data: Session; message?: string };
    return { res, body };
  }

  const withCookie = (cookie: string, path: string, init: RequestInit = {}) =>
    fetch(h.baseUrl + path, { ...init, headers: { cookie, ...(init.headers as Record<string, string>) } });

  it('sets an httpOnly, SameSite=Strict cookie that authenticates reads as the token’s user, never in the body', async () => {
    const org = await h.newOrg();
    const { res, body } = await open(org.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { pair, attributes } = cookieOf(res);
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/']));
    // Plain HTTP on loopback: a Secure cookie would never be sent back.
    expect(attributes).not.toContain('Secure');
    const secret = pair.split('=')[1]!;
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(body.data.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const me = await withCookie(pair, '/platform/tokens/current');
    expect(me.status).toBe(200);
    const data = ((await me.json()) as { data: { user: { id: string }; name: string } }).data;
    expect(data.user.id).toBe(org.userId);
    expect(data.name).toBe('console session');
    // A page reload asks for the CSRF token again: the same one, derived from the session.
    const again = await withCookie(pair, '/platform/session');
    expect(((await again.json()) as { data: Session }).data.csrfToken).toBe(body.data.csrfToken);
    // The compat origin takes the cookie too (the console uploads zips there).
    expect((await withCookie(pair, '/compat/deployments')).status).toBe(200);
    // Console sessions are not credentials to hand on: the token list leaves them out.
    const tokens = await client(h, org.token).get<{ data: Array<{ name: string }> }>('/platform/tokens');
    expect(tokens.body.data.map((t) => t.name)).toEqual(['bootstrap']);
  });

  it('marks the cookie Secure when the request came over TLS through a proxy', async () => {
    const { res } = await open((await h.newOrg()).token, { 'x-forwarded-proto': 'https' });
    expect(cookieOf(res).attributes).toContain('Secure');
  });

  it('refuses a change made with the cookie but without the CSRF token, and changes nothing', async () => {
    const org = await h.newOrg();
    const { res, body } = await open(org.token);
    const { pair } = cookieOf(res);
    const create = (headers: Record<string, string>) =>
      withCookie(pair, '/platform/projects', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ name: 'csrf-probe' }),
      });
    const attempts: Array<Record<string, string>> = [
      {},
      { 'x-csrf-token': 'forged' },
      { 'x-csrf-token': body.data.csrfToken.slice(1) },
    ];
    for (const headers of attempts) {
      const refused = await create(headers);
      expect(refused.status).toBe(403);
      const err = (await refused.json()) as { status: string; message: string };
      expect(err).toMatchObject({ status: 'error' });
      expect(err.message).toMatch(/X-CSRF-Token|x-csrf-token/i);
    }
    const compat = await withCookie(pair, '/compat/deploy', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ image: 'nginx', name: 'csrf' }),
    });
    expect(compat.status).toBe(403);
    expect(((await compat.json()) as { code: string }).code).toBe('INSUFFICIENT_SCOPE');
    const names = async () =>
      (
        await client(h, org.token).get<{ data: { projects: Array<{ name: string }> } }>('/platform/projects')
      ).body.data.projects.map((p) => p.name);
    expect(await names()).not.toContain('csrf-probe');

    const made = await create({ 'x-csrf-token': body.data.csrfToken });
    expect(made.status).toBeLessThan(300);
    expect(await names()).toContain('csrf-probe');
  });

  it('a bearer header wins over a cookie, and a session cannot open another', async () => {
    const a = await h.newOrg();
    const b = await h.newOrg();
    const { res } = await open(a.token);
    const { pair } = cookieOf(res);
    const me = await fetch(`${h.baseUrl}/platform/tokens/current`, {
      headers: { cookie: pair, authorization: `Bearer ${b.token}` },
    });
    expect(((await me.json()) as { data: { org: { id: string } } }).data.org.id).toBe(b.orgId);
    // A change with a bearer token needs no CSRF token, whatever cookie rides along.
    const made = await fetch(`${h.baseUrl}/platform/projects`, {
      method: 'POST',
      headers: { cookie: pair, authorization: `Bearer ${b.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bearer-wins' }),
    });
    expect(made.status).toBeLessThan(300);
    const secret = pair.split('=')[1]!;
    const nested = await open(secret);
    expect(nested.res.status).toBe(400);
    expect(nested.body.message).toMatch(/already a console session/);
    // The session routes answer only a session: a bearer token is told how to open one.
    const viaBearer = await client(h, a.token).get<{ message: string }>('/platform/session');
    expect(viaBearer.status).toBe(400);
    expect(viaBearer.body.message).toMatch(/POST \/platform\/session/);
  });

  it('signs out: the session is revoked at once, the cookie cleared, the token lives on', async () => {
    const org = await h.newOrg();
    const { res, body } = await open(org.token);
    const { pair } = cookieOf(res);
    const out = await withCookie(pair, '/platform/session', {
      method: 'DELETE',
      headers: { 'x-csrf-token': body.data.csrfToken },
    });
    expect(out.status).toBe(204);
    const cleared = out.headers.getSetCookie().find((c) => c.startsWith('slipway_session='));
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/);
    const replay = await withCookie(pair, '/platform/tokens/current');
    expect(replay.status).toBe(401);
    expect((await client(h, org.token).get('/platform/tokens/current')).status).toBe(200);
  });

  it('ends with the token it came from: revoked, or expired no later than it', async () => {
    const org = await h.newOrg();
    const owner = client(h, org.token);
    const short = await owner.post<{ data: { id: string; token: string; expiresAt: string } }>('/platform/tokens', {
      name: 'short',
      scopes: ['deployment.read', 'token.manage'],
      expiresIn: '10m',
    });
    const { res, body } = await open(short.body.data.token);
    expect(Date.parse(body.data.expiresAt)).toBeLessThanOrEqual(Date.parse(short.body.data.expiresAt));
    const { pair } = cookieOf(res);
    expect((await withCookie(pair, '/platform/tokens/current')).status).toBe(200);
    expect((await owner.del(`/platform/tokens/${short.body.data.id}`)).status).toBe(204);
    const after = await withCookie(pair, '/platform/tokens/current');
    expect(after.status).toBe(401);
    expect(((await after.json()) as { message: string }).message).toMatch(/revoked/);
  });

  it('serves the console at / and its pages, and keeps the API’s unknown paths JSON', async () => {
    const html = await fetch(`${h.baseUrl}/`, { headers: { accept: 'text/html' } });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/text\/html/);
    expect(html.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    const page = await html.text();
    expect(page).toContain('<div id="root">');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(h.baseUrl + script!);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toMatch(/immutable/);
    // A reload of a page deep in the console lands on the app.
    const deep = await fetch(`${h.baseUrl}/deployments/123`, { headers: { accept: 'text/html' } });
    expect(await deep.text()).toContain('<div id="root">');
    // The API's own paths stay the API's: an unknown one is its JSON 404, even asked for as a page.
    const unknown = await fetch(`${h.baseUrl}/platform/nowhere`, { headers: { accept: 'text/html' } });
    expect(unknown.status).toBe(401);
    const missing = await fetch(`${h.baseUrl}/assets/missing.js`, { headers: { accept: 'text/html' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/json/);
    const apiClient = await fetch(`${h.baseUrl}/nowhere`, { headers: { accept: 'application/json' } });
    expect(apiClient.status).toBe(404);
    expect(apiClient.headers.get('content-type')).toMatch(/json/);
  });
});
