import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { client } from '../helpers/client';
import type { DatabaseBody } from '../helpers/databases';
import { type Harness, startHarness } from '../helpers/harness';
import { readResult } from '../helpers/mcp';

type Body = Record<string, unknown>;
interface AuditBody {
  data: { events: { action: string; resource: { type: string; id: string | null } }[] };
}

/**
 * Databases as the api keeps them, no worker: names, bodies, plan limits, who sees what, the credentials' reveal and
 * its audit, and the MCP tools. What the workflows do is tested with a worker (databases.test.ts and beside it).
 */
describe('databases: the api', () => {
  let h: Harness;
  const mcpClients: Client[] = [];
  beforeAll(async () => {
    h = await startHarness(
      'databases-api',
      { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS: '500' },
      { worker: false },
    );
  });
  afterAll(async () => {
    for (const c of mcpClients) await c.close().catch(() => undefined);
    await h?.stop();
  });

  it('creates a managed database that reads creating, refuses a second of its name, and refuses bad bodies', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const made = await api.post<DatabaseBody>('/platform/databases', {
      projectId: org.projectId,
      engine: 'postgresql',
      name: 'main',
      sizeGb: 2,
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    expect(made.body.data).toMatchObject({
      kind: 'managed',
      engine: 'postgresql',
      name: 'main',
      projectId: org.projectId,
      deploymentId: null,
      status: 'creating',
      host: `db-${id}`,
      port: 5432,
    });
    // No credential in any answer but the reveal.
    expect(JSON.stringify(made.body)).not.toMatch(/password|credentials/i);
    const again = await api.post<{ message: string }>('/platform/databases', {
      projectId: org.projectId,
      engine: 'redis',
      name: 'main',
      sizeGb: 1,
    });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('A managed database named main exists');
    for (const body of [
      { projectId: org.projectId, engine: 'oracle', name: 'x', sizeGb: 1 },
      { projectId: org.projectId, engine: 'redis', name: 'Not A Label', sizeGb: 1 },
      { projectId: org.projectId, engine: 'redis', name: 'x', sizeGb: 0 },
      { projectId: org.projectId, engine: 'redis', name: 'x', sizeGb: 1, password: 'mine' },
      { engine: 'redis', name: 'x', sizeGb: 1 },
    ]) {
      const r = await api.post<{ message: string }>('/platform/databases', body);
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.message).toMatch(/^Invalid body/);
    }
    const list = await api.get<{ data: { databases: { id: string }[]; total: number } }>('/platform/databases');
    expect(list.body.data).toMatchObject({ total: 1, databases: [expect.objectContaining({ id })] });
  });

  it("holds the organisation to its plan's database count and total size, naming both", async () => {
    const org = await h.newOrgWithProject('free');
    const api = client(h, org.token);
    const make = (name: string, sizeGb: number) =>
      api.post<{ message: string }>('/platform/databases', { projectId: org.projectId, engine: 'redis', name, sizeGb });
    const big = await make('too-big', 5);
    expect(big.status).toBe(429);
    expect(big.body.message).toContain('The free plan allows 2 databases of 4 GB in all');
    expect((await make('one', 2)).status).toBe(201);
    expect((await make('two', 2)).status).toBe(201);
    const third = await make('three', 1);
    expect(third.status).toBe(429);
    expect(third.body.message).toContain('delete a database or choose a smaller size');
  });

  it('reveals credentials only with database.reveal, and writes every reveal to the audit trail', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const id = (
      await api.post<DatabaseBody>('/platform/databases', {
        projectId: org.projectId,
        engine: 'mariadb',
        name: 'shop',
        sizeGb: 1,
      })
    ).body.data.id;
    const c = await api.get<{ data: { user: string; password: string; database: string; url: string; host: string } }>(
      `/platform/databases/${id}/connection`,
    );
    expect(c.status).toBe(200);
    expect(c.headers.get('cache-control')).toBe('no-store');
    expect(c.body.data).toMatchObject({ user: 'app', database: 'app', host: `db-${id}` });
    expect(c.body.data.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(c.body.data.url).toBe(`mysql://app:${c.body.data.password}@db-${id}:3306/app`);
    const trail = await api.get<AuditBody>('/platform/audit');
    const mine = trail.body.data.events.filter((e) => e.resource.id === id).map((e) => e.action);
    expect(mine).toEqual(expect.arrayContaining(['database.create', 'database.reveal']));
    // The trail holds no secret.
    expect(JSON.stringify(trail.body)).not.toContain(c.body.data.password);

    // A token without database.reveal reads the database but not its credentials.
    const limited = await h.identity.createToken({
      orgId: org.orgId,
      userId: org.userId,
      name: 'no-reveal',
      scopes: ['database.read'],
    });
    const other = client(h, limited.token);
    expect((await other.get(`/platform/databases/${id}`)).status).toBe(200);
    expect((await other.get(`/platform/databases/${id}/connection`)).status).toBe(403);
  });

  it("keeps another organisation's databases, backups and schedules unknown (404)", async () => {
    const a = await h.newOrgWithProject('pro');
    const b = await h.newOrgWithProject('pro');
    const id = (
      await client(h, a.token).post<DatabaseBody>('/platform/databases', {
        projectId: a.projectId,
        engine: 'redis',
        name: 'a-cache',
        sizeGb: 1,
      })
    ).body.data.id;
    const api = client(h, b.token);
    for (const [method, path] of [
      ['GET', `/platform/databases/${id}`],
      ['GET', `/platform/databases/${id}/connection`],
      ['GET', `/platform/databases/${id}/backups`],
      ['POST', `/platform/databases/${id}/backups`],
      ['GET', `/platform/databases/${id}/backup-schedule`],
      ['PUT', `/platform/databases/${id}/backup-schedule`],
      ['DELETE', `/platform/databases/${id}`],
    ] as const) {
      const r = await api.call(method, path, method === 'PUT' ? { cron: '0 3 * * *' } : undefined);
      expect([method, path, r.status]).toEqual([method, path, 404]);
    }
    expect((await api.get<{ data: { total: number } }>('/platform/databases')).body.data.total).toBe(0);
  });

  it('refuses to back up, snapshot or restore in place a database that is not ready, saying what to do', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const id = (
      await api.post<DatabaseBody>('/platform/databases', {
        projectId: org.projectId,
        engine: 'postgresql',
        name: 'young',
        sizeGb: 1,
      })
    ).body.data.id;
    const backup = await api.post<{ message: string }>(`/platform/databases/${id}/backups`);
    expect(backup.status).toBe(409);
    expect(backup.body.message).toContain('is creating, so it cannot be backed up now');
    const snap = await api.post<{ message: string }>(`/platform/databases/${id}/snapshots`);
    expect(snap.status).toBe(409);
    const missing = await api.post(`/platform/databases/${id}/backups/${id}/restore`, {});
    expect(missing.status).toBe(404);
  });

  it('creates, lists and backs up databases through MCP, as an agent calls the tools', async () => {
    const org = await h.newOrgWithProject('pro');
    const c = new Client({ name: 'databases-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${org.token}` } },
      }),
    );
    mcpClients.push(c);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'create_database',
        'create_managed_database',
        'link_database',
        'list_databases',
        'backup_database',
        'list_backups',
        'restore_backup',
      ]),
    );
    const call = async (name: string, args: Body) =>
      readResult((await c.callTool({ name, arguments: args })) as CallToolResult);

    const made = await call('create_managed_database', {
      projectId: org.projectId,
      engine: 'redis',
      name: 'agent-cache',
      sizeGb: 1,
    });
    expect(made.isError).toBe(false);
    expect(made.s.database).toMatchObject({ name: 'agent-cache', engine: 'redis', status: 'creating' });
    const listed = await call('list_databases', {});
    expect(listed.s).toMatchObject({ total: 1, databases: [expect.objectContaining({ id: made.s.database.id })] });
    const early = await call('backup_database', { databaseId: made.s.database.id });
    expect(early.isError).toBe(true);
    expect(early.s.message).toContain('try again once it reads ready');
    const unknown = await call('list_backups', { databaseId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.isError).toBe(true);
    expect(unknown.s.message).toContain('No database 00000000-0000-4000-8000-000000000000');
    const noDeployment = await call('create_database', {
      deploymentId: '00000000-0000-4000-8000-000000000000',
      engine: 'postgresql',
    });
    expect(noDeployment.isError).toBe(true);
  });
});
