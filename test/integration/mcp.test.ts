import fs from 'node:fs/promises';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage, buildImageOnce } from '../helpers/images';
import { readResult } from '../helpers/mcp';

const ROOT = path.resolve(__dirname, '..', '..');
/** The wrong-port app: it listens on 3000 while its deployment says 8080. */
const PORT_3000 = 'slipway-test/listens-3000:latest';

let h: Harness;
let owner: { orgId: string; userId: string; token: string };
let hello: string;
const clients: Client[] = [];

beforeAll(async () => {
  h = await startHarness('mcp', { DEPLOY_READY_TIMEOUT_S: '8' });
  owner = await h.newOrg();
  hello = await buildFixtureImage(h.docker, 'hello');
  await buildImageOnce(h.docker, PORT_3000, async (context) => {
    await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
    await fs.mkdir(path.join(context, 'www'));
    await fs.writeFile(path.join(context, 'www', 'index.html'), 'on 3000\n');
    await fs.writeFile(
      path.join(context, 'Dockerfile'),
      'FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nENTRYPOINT ["/bin/busybox", "httpd", "-f", "-v", "-p", "3000", "-h", "/www"]\n',
    );
  });
}, 300_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await h?.stop();
});

/**
 * A client as an agent's host runs it: connected, then the tool list read, so the SDK's callTool checks every
 * structuredContent against the tool's outputSchema (it checks nothing for a tool it has not listed).
 */
async function overHttp(token: string): Promise<Client> {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(c);
  await c.listTools();
  return c;
}

/** `slipway mcp` as an agent starts it: the CLI, the token in SLIPWAY_TOKEN, the api's configuration. */
async function overStdio(token: string): Promise<Client> {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' });
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'bin', 'slipway.cjs'), 'mcp'],
      cwd: ROOT,
      env: {
        ...(process.env as Record<string, string>),
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        MONGODB_DB: 'slipway_test',
        TEMPORAL_TASK_QUEUE: h.taskQueue,
        REDIS_KEY_PREFIX: h.config.REDIS_KEY_PREFIX,
        DEPLOY_READY_TIMEOUT_S: '8',
        SLIPWAY_TOKEN: token,
      },
      stderr: 'inherit',
    }),
  );
  clients.push(c);
  await c.listTools();
  return c;
}

const TRANSPORTS = { http: overHttp, stdio: overStdio };

/** One call through the SDK's callTool, read as an agent reads it (test/helpers/mcp.ts). */
async function call(c: Client, name: string, args: Record<string, unknown> = {}) {
  return readResult((await c.callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult);
}

async function tokenWith(scopes: string[], who: { orgId: string; userId: string } = owner) {
  const t = await h.identity.createToken({
    orgId: who.orgId,
    userId: who.userId,
    name: 'mcp-test',
    scopes: scopes as never,
  });
  return t.token;
}

describe('MCP tool list', () => {
  it('lists every tool with a title, schemas and all four annotations; a read-only token sees no mutating tool', async () => {
    const all = (await (await overHttp(owner.token)).listTools()).tools;
    const names = all.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['whoami', 'deploy', 'get_logs', 'destroy_deployment']));
    for (const t of all) {
      expect(t.title).toBeTruthy();
      expect(t.description!.length).toBeGreaterThan(30);
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
        expect(typeof t.annotations?.[hint]).toBe('boolean');
    }
    // What an agent pays to load the list: printed for the closing note.
    console.log(`tools/list: ${all.length} tools, ${JSON.stringify({ tools: all }).length} characters of JSON`);

    const readOnly = await overHttp(await tokenWith(['deployment.read', 'deployment.logs']));
    const seen = (await readOnly.listTools()).tools;
    expect(seen.map((t) => t.name)).toEqual(expect.arrayContaining(['whoami', 'get_deployment', 'get_logs']));
    expect(seen.filter((t) => t.annotations?.readOnlyHint !== true)).toEqual([]);
    // Called anyway, the handler checks again.
    const refused = await call(readOnly, 'deploy', { image: hello, name: 'nope', port: 8080, waitS: 0 });
    expect(refused.isError).toBe(true);
    expect(refused.s).toMatchObject({ code: 'INSUFFICIENT_SCOPE', retryable: false, next: { tool: 'whoami' } });
  });

  it('refuses a missing or unknown token with 401 before any MCP message is read', async () => {
    const res = await fetch(`${h.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'INVALID_TOKEN' } } });
    await expect(overHttp(`svc_${'x'.repeat(43)}`)).rejects.toMatchObject({ code: 401, message: /INVALID_TOKEN/ });
  });

  it('answers a bad argument with an INVALID_REQUEST result, not a protocol error', async () => {
    const r = await call(await overHttp(owner.token), 'get_deployment', { deploymentId: 'not-a-uuid' });
    expect(r.isError).toBe(true);
    expect(r.s).toMatchObject({ code: 'INVALID_REQUEST', retryable: false });
    expect(r.s.message).toMatch(/deploymentId/);
    const twoSources = await call(await overHttp(owner.token), 'deploy', {
      image: hello,
      repoUrl: 'https://git.example.com/a.git',
      name: 'two',
    });
    expect(twoSources.s).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(twoSources.s.message).toMatch(/exactly one source/);
  });
});

describe.each(Object.keys(TRANSPORTS) as (keyof typeof TRANSPORTS)[])('MCP over %s', (transport) => {
  let c: Client;
  beforeAll(async () => {
    c = await TRANSPORTS[transport](owner.token);
  }, 120_000);

  it('stops serving a token as soon as it is revoked', async () => {
    const t = await h.identity.createToken({
      orgId: owner.orgId,
      userId: owner.userId,
      name: `revoked-${transport}`,
      scopes: ['deployment.read'],
    });
    const other = await TRANSPORTS[transport](t.token);
    expect((await call(other, 'list_deployments')).isError).toBe(false);
    await h.identity.revokeToken(t.id, owner.orgId);
    const revokedAt = Date.now();
    // Over HTTP every request is authenticated before MCP sees it (401); over stdio every call checks the token again.
    // Another process holding the principal cached learns of the revocation within a second (docs/architecture.md).
    const refusal = async () => {
      if (transport === 'http')
        return call(other, 'list_deployments').then(
          () => undefined,
          (err: { code?: number }) => ({ code: err.code }),
        );
      const r = await call(other, 'list_deployments');
      return r.isError ? r.s : undefined;
    };
    let refused = await refusal();
    while (!refused && Date.now() - revokedAt < 1000) refused = await refusal();
    if (transport === 'http') expect(refused).toEqual({ code: 401 });
    else expect(refused).toMatchObject({ code: 'INVALID_TOKEN', retryable: false });
  });

  it('whoami names the organisation, role, scopes and budgets', async () => {
    const r = await call(c, 'whoami');
    expect(r.isError).toBe(false);
    expect(r.s).toMatchObject({ org: { id: owner.orgId }, user: { role: 'owner' } });
    expect(r.s.budgets.mcp).toMatchObject({ limit: 300, windowSeconds: 300, per: 'token' });
  });

  it('deploys a local image and waits for it, reads its logs fenced, then destroys it in two steps', async () => {
    const deployed = await call(c, 'deploy', {
      image: hello,
      name: `mcp-${transport}`,
      port: 8080,
      requestId: `mcp-${transport}-1`,
    });
    expect(deployed.isError).toBe(false);
    expect(deployed.s).toMatchObject({ settled: true, deployment: { status: 'running' } });
    const deploymentId = deployed.s.deploymentId as string;
    // busybox httpd -v logs each request: lines enough to see the cap at work.
    for (let i = 0; i < 10; i++) expect((await fetch(deployed.s.deployment.url as string)).status).toBe(200);

    const logs = await call(c, 'get_logs', { deploymentId, stream: 'all', tail: 50 });
    expect(logs.isError).toBe(false);
    expect(logs.s.log).toMatch(/^<untrusted-log-[0-9a-f]{12}>\n[\s\S]*\n<\/untrusted-log-[0-9a-f]{12}>$/);
    expect(logs.s.lines).toBeGreaterThan(0);
    expect(logs.s.log.length).toBeGreaterThan(400);
    const tiny = await call(c, 'get_logs', { deploymentId, maxChars: 200 });
    expect(tiny.s).toMatchObject({ truncated: true });
    expect(tiny.s.lines).toBeLessThan(logs.s.lines);

    const preview = await call(c, 'destroy_deployment', { deploymentId });
    expect(preview.s).toMatchObject({ destroyed: false, preview: { name: `mcp-${transport}`, status: 'running' } });
    expect(
      await h.docker.listContainers({ filters: { label: [`dev.slipway.deployment-id=${deploymentId}`] } }),
    ).not.toHaveLength(0);
    const forged = await call(c, 'destroy_deployment', { deploymentId, confirm: `${preview.s.confirm as string}x` });
    expect(forged.isError).toBe(true);
    expect(forged.s).toMatchObject({ code: 'INVALID_REQUEST', next: { tool: 'destroy_deployment' } });

    const destroyed = await call(c, 'destroy_deployment', { deploymentId, confirm: preview.s.confirm });
    expect(destroyed.s).toMatchObject({ destroyed: true, deploymentId });
    const gone = await call(c, 'get_deployment', { deploymentId });
    expect(gone.s).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND', next: { tool: 'list_deployments' } });

    const events = await h.db
      .collection('audit_events')
      .find({ orgId: owner.orgId, origin: 'mcp', 'resource.id': deploymentId })
      .toArray();
    expect(events.map((e) => [e.action, e.actor.type, e.outcome])).toEqual(
      expect.arrayContaining([
        ['deploy', 'token', 'success'],
        ['destroy_deployment', 'token', 'failure'],
        ['destroy_deployment', 'token', 'success'],
      ]),
    );
  });
});

describe('MCP diagnosis', () => {
  it('a deploy of an app listening on 3000 while the deployment says 8080 fails, and diagnose says so', async () => {
    const c = await overHttp(owner.token);
    const deployed = await call(c, 'deploy', { image: PORT_3000, name: 'wrong-port', port: 8080 });
    expect(deployed.s).toMatchObject({
      settled: true,
      deployment: { status: 'failed' },
      next: { tool: 'diagnose_deployment' },
    });
    const d = await call(c, 'diagnose_deployment', { deploymentId: deployed.s.deploymentId });
    expect(d.isError).toBe(false);
    expect(d.s).toMatchObject({ status: 'failed', healthy: false, phase: 'ready' });
    // The hint table's wrong-port answer: the port the app listens on, read from the container, and the one asked.
    expect(d.s.hint).toMatch(/listens on port 3000, but the deployment says 8080/);
    expect(d.s.hint).toMatch(/port 3000/);
  });
});

describe('MCP deployment controls, projects and sales', () => {
  it('redeploys with a new environment and rolls back, each waited on in the same call', async () => {
    const c = await overHttp(owner.token);
    const deployed = await call(c, 'deploy', { image: hello, name: 'controls', port: 8080 });
    const deploymentId = deployed.s.deploymentId as string;
    const redeployed = await call(c, 'redeploy', { deploymentId, envVars: { GREETING: 'hello' } });
    expect(redeployed.isError).toBe(false);
    expect(redeployed.s).toMatchObject({ state: 'succeeded', status: 'running', revision: 2 });

    const back = await call(c, 'rollback', { deploymentId });
    expect(back.s).toMatchObject({ state: 'succeeded', status: 'running', revision: 3, command: { name: 'rollback' } });
    const got = await call(c, 'get_deployment', { deploymentId });
    expect(got.s.deployment).toMatchObject({ revision: 3, envVarNames: [] });
    expect(got.s.deployment.releases.recent[0]).toMatchObject({ revision: 3, trigger: 'rollback', rollbackOf: 1 });
    expect(got.s.health).toMatchObject({ overall: 'healthy' });

    const refused = await call(c, 'start', { deploymentId });
    expect(refused.s).toMatchObject({ code: 'INVALID_REQUEST', details: { status: 'running' } });

    // Another organisation: the same ID is not found, whatever the tool; a confirm is bound to the token it was
    // issued to, so another token of the same organisation cannot use it either.
    const stranger = await overHttp((await h.newOrg()).token);
    for (const tool of ['get_deployment', 'get_logs', 'rollback', 'destroy_deployment'])
      expect((await call(stranger, tool, { deploymentId })).s).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });
    const preview = await call(c, 'destroy_deployment', { deploymentId });
    const colleague = await overHttp(await tokenWith(['deployment.read', 'deployment.manage']));
    const misused = await call(colleague, 'destroy_deployment', { deploymentId, confirm: preview.s.confirm });
    expect(misused.s).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((await call(c, 'get_deployment', { deploymentId })).s.deployment.status).toBe('running');
    expect((await call(c, 'destroy_deployment', { deploymentId, confirm: preview.s.confirm })).s.destroyed).toBe(true);
  });

  it('creates and lists projects, and answers a seller’s questions', async () => {
    const c = await overHttp(owner.token);
    const created = await call(c, 'create_project', { name: 'mcp-project', description: 'made by an agent' });
    expect(created.s.project).toMatchObject({ name: 'mcp-project' });
    const listed = await call(c, 'list_projects', {});
    expect(listed.s.projects.map((p: { id: string }) => p.id)).toContain(created.s.project.id);
    expect(await call(c, 'list_deliveries', {})).toMatchObject({ isError: false, s: { deliveries: [], total: 0 } });
    // What the seller recorded, as the console's lists show it.
    const rest = (p: string, body: unknown) =>
      fetch(h.baseUrl + p, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ data: { id: string; saleId: string } }>);
    const product = await rest('/platform/products', {
      name: 'Course',
      billingType: 'ONE_TIME',
      price: 49,
      currency: 'USD',
    });
    const sale = await rest('/platform/sales', {
      productId: product.data.id,
      buyer: { email: 'ada@example.com', name: 'Ada' },
      amount: 49,
      currency: 'USD',
    });
    expect(await call(c, 'list_products', {})).toMatchObject({
      isError: false,
      s: { products: [{ id: product.data.id, name: 'Course', billingType: 'ONE_TIME', interval: null }] },
    });
    expect(await call(c, 'list_sales', { limit: 5 })).toMatchObject({
      isError: false,
      s: {
        sales: [{ id: sale.data.saleId, productName: 'Course', buyer: { email: 'ada@example.com' }, refundedAt: null }],
        total: 1,
        limit: 5,
        offset: 0,
      },
    });
    expect(await call(c, 'lookup_entitlements', { email: 'buyer@example.com' })).toMatchObject({
      isError: false,
      s: { entitlements: [] },
    });
    const unknown = await call(c, 'resend_delivery', { eventId: 'no-such-event' });
    expect(unknown).toMatchObject({ isError: true, s: { retryable: false } });
  });
});

describe('MCP error results, as the official client hands them to an agent', () => {
  // Each client below has listed the tools, so callTool checks structuredContent against the tool's outputSchema: a
  // failure must reach the agent as its result (code, message, next), never as the client's own -32602.
  let org: { orgId: string; userId: string; token: string };
  let c: Client;
  let deploymentId: string;

  beforeAll(async () => {
    org = await h.newOrg();
    c = await overHttp(org.token);
    const deployed = await call(c, 'deploy', { image: hello, name: 'errors', port: 8080 });
    expect(deployed.s).toMatchObject({ settled: true, deployment: { status: 'running' } });
    deploymentId = deployed.s.deploymentId as string;
  }, 120_000);

  it('an unknown deployment: DEPLOYMENT_NOT_FOUND, and where to look instead', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const r = await call(c, 'get_deployment', { deploymentId: missing });
    expect(r.isError).toBe(true);
    expect(r.text.split('\n')[0]).toBe(`DEPLOYMENT_NOT_FOUND: No deployment ${missing} in this organisation.`);
    expect(r.s).toMatchObject({
      code: 'DEPLOYMENT_NOT_FOUND',
      retryable: false,
      next: { tool: 'list_deployments' },
      details: { deploymentId: missing },
    });
    expect(r.s).not.toHaveProperty('retryAfterS');
    // Another organisation's deployment reads the same, whatever the tool.
    const stranger = await overHttp((await h.newOrg()).token);
    for (const tool of ['get_deployment', 'stop', 'destroy_deployment'])
      expect((await call(stranger, tool, { deploymentId })).s).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });
  });

  it('a refused permission: INSUFFICIENT_SCOPE naming what is missing, and whoami next', async () => {
    // deploy is listed for this token; sending a vault secret needs secret.use on top of deployment.create.
    const deployer = await overHttp(await tokenWith(['deployment.read', 'deployment.create'], org));
    const r = await call(deployer, 'deploy', {
      repoUrl: 'https://github.com/slipway-test/private.git',
      gitTokenSecretId: 'any-secret',
      name: 'private',
    });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^INSUFFICIENT_SCOPE: gitTokenSecretId needs the secret\.use permission/);
    expect(r.s).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      retryable: false,
      next: { tool: 'whoami' },
      details: { required: 'secret.use' },
    });
    // A tool the token may not use at all is not listed, and called anyway it is refused the same way.
    const reader = await overHttp(await tokenWith(['deployment.read'], org));
    expect((await call(reader, 'stop', { deploymentId })).s).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required: 'deployment.manage', missing: 'scope' },
    });
  });

  it('a bad argument: INVALID_REQUEST naming the field', async () => {
    const r = await call(c, 'get_deployment', { deploymentId: 'not-a-uuid' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^INVALID_REQUEST: Invalid arguments for get_deployment:/);
    expect(r.s).toMatchObject({
      code: 'INVALID_REQUEST',
      retryable: false,
      details: { issues: [{ path: 'deploymentId' }] },
    });
    const unknown = await call(c, 'scale', { deploymentId, replicas: 1, size: 'large' });
    expect(unknown.s).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(unknown.s.message).toMatch(/size/);
  });

  it('a destroy with a wrong confirm: INVALID_REQUEST, nothing destroyed, and how to get a new confirm', async () => {
    const preview = await call(c, 'destroy_deployment', { deploymentId });
    expect(preview.s).toMatchObject({ destroyed: false, preview: { name: 'errors' } });
    const r = await call(c, 'destroy_deployment', { deploymentId, confirm: `${preview.s.confirm as string}x` });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^INVALID_REQUEST: The confirm token is expired, or was not issued for this deployment/);
    expect(r.s).toMatchObject({
      code: 'INVALID_REQUEST',
      retryable: false,
      next: { tool: 'destroy_deployment', arguments: { deploymentId } },
      details: { deploymentId },
    });
    expect((await call(c, 'get_deployment', { deploymentId })).s.deployment.status).toBe('running');
  });

  it('every control answers in its outputSchema: stop, wait_for_command, start, wait_for_deployment, scale', async () => {
    const stopped = await call(c, 'stop', { deploymentId, waitS: 0 });
    expect(stopped.isError).toBe(false);
    const commandId = stopped.s.command.id as string;
    const waited = await call(c, 'wait_for_command', { deploymentId, commandId });
    expect(waited.s).toMatchObject({ state: 'succeeded', status: 'stopped', command: { id: commandId } });
    expect((await call(c, 'start', { deploymentId })).s).toMatchObject({ state: 'succeeded', status: 'running' });
    const running = await call(c, 'wait_for_deployment', { deploymentId, until: 'running' });
    expect(running.s).toMatchObject({ settled: true, deployment: { status: 'running' } });
    const scaled = await call(c, 'scale', { deploymentId, replicas: 1 });
    expect(scaled.s).toMatchObject({ state: 'succeeded', replicas: 1 });
  });
});

describe('MCP rate limit', () => {
  it('admits 300 requests in 5 minutes per token; the 301st tools/call is an isError result with retryAfterS', async () => {
    const c = await overHttp(await tokenWith(['deployment.read']));
    let admitted = 2; // initialize, tools/list
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    while (!refused && admitted <= 300) {
      const r = await call(c, 'list_deployments', { limit: 1 });
      if (r.isError) refused = r;
      else admitted++;
    }
    expect(admitted).toBe(300);
    expect(refused?.s).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      retryable: true,
      next: { tool: 'list_deployments', arguments: { limit: 1 } },
    });
    expect(refused?.s.retryAfterS).toBeGreaterThan(0);
    expect(refused?.s.retryAfterS).toBeLessThanOrEqual(300);
    expect(refused?.text.split('\n')[0]).toBe(
      `RATE_LIMIT_EXCEEDED: 300 MCP requests per token per 5 minutes; retry after ${String(refused?.s.retryAfterS)} s`,
    );
    // Other requests past the budget are a 429 with Retry-After.
    await expect(c.listTools()).rejects.toMatchObject({ code: 429, message: /RATE_LIMIT_EXCEEDED/ });
  });
});
