import { PassThrough } from 'node:stream';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import mysql from 'mysql2/promise';
import pg from 'pg';

import type { SourceEndpoint } from '@shared/database-sources/endpoint';
import { SourceQueryError } from '@shared/database-sources/endpoint';
import { runReadOnly } from '@shared/database-sources/runner';
import { databaseContainerName } from '@shared/databases/engines';

import * as mysqlCorpus from '../fixtures/sql-safety/mysql';
import * as pgCorpus from '../fixtures/sql-safety/postgres';
import { openai, type ProviderDouble, startOpenAiDouble } from '../helpers/ai-doubles';
import { client } from '../helpers/client';
import { type Credentials, databaseReads } from '../helpers/databases';
import { type Harness, startHarness } from '../helpers/harness';
import { connectAgent } from '../helpers/mcp';

type Body = Record<string, unknown>;
interface Data<T = Body> {
  data: T;
}
/** The platform's error body: the message alone, which names the rule a refused statement broke. */
interface ErrorBody {
  status: 'error';
  message: string;
}
const ruleOf = (r: { status: number; body: ErrorBody }) =>
  r.status === 400 ? /^blocked by a safety check \(rule ([a-z-]+)\)/.exec(r.body.message ?? '')?.[1] : undefined;
type QueryAnswer = { columns: { name: string }[]; rows: unknown[][]; rowCount: number; truncated: boolean };
const sqlOf = (e: string | { sql: string }) => (typeof e === 'string' ? e : e.sql);

/** A managed database made through the api, with what a client outside needs to reach it: address and credentials. */
async function managedDatabase(h: Harness, api: ReturnType<typeof client>, projectId: string, engine: string) {
  const made = await api.post<Data<{ id: string }>>('/platform/databases', {
    projectId,
    engine,
    name: `src-${engine}`,
    sizeGb: 1,
  });
  expect(made.status).toBe(201);
  const id = made.body.data.id;
  await databaseReads(api, `/platform/databases/${id}`);
  const creds = (await api.get<Data<Credentials>>(`/platform/databases/${id}/connection`)).body.data;
  const info = await h.docker.getContainer(databaseContainerName(id)).inspect();
  const address = Object.values(info.NetworkSettings.Networks).find((n) => n.IPAddress)!.IPAddress;
  return { id, creds, address, containerId: info.Id };
}

/** Runs SQL as the engine's administrator inside its container (peer or socket authentication). */
async function adminSql(h: Harness, containerId: string, engine: 'postgresql' | 'mariadb', sql: string) {
  const cmd =
    engine === 'postgresql'
      ? ['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'app', '-c', sql]
      : ['mariadb', '-uroot', 'app', '-e', sql];
  const exec = await h.docker
    .getContainer(containerId)
    .exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, User: engine === 'postgresql' ? 'postgres' : 'root' });
  const stream = await exec.start({ hijack: true, stdin: false });
  let out = '';
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => (out += c.toString()));
  h.docker.modem.demuxStream(stream, sink, sink);
  await new Promise((resolve) => stream.once('end', resolve));
  const { ExitCode } = await exec.inspect();
  if (ExitCode !== 0) throw new Error(`${cmd[0]} exited ${ExitCode}: ${out}`);
  return out;
}

/** A digest of the fixture tables' contents and of the tables that exist: what "nothing changed" is checked against. */
/** Runs statements as the source's own user, outside both layers (the tests' setup and their checks of the data). */
async function asOwner<T>(ep: SourceEndpoint, fn: (query: (sql: string) => Promise<Body[]>) => Promise<T>): Promise<T> {
  const login = { host: ep.address, port: ep.port, user: ep.user, password: ep.password, database: ep.database };
  if (ep.engine === 'postgres') {
    const c = new pg.Client(login);
    await c.connect();
    try {
      return await fn(async (sql) => (await c.query(sql)).rows as Body[]);
    } finally {
      await c.end();
    }
  }
  const c = await mysql.createConnection(login);
  try {
    return await fn(async (sql) => (await c.query(sql))[0] as Body[]);
  } finally {
    await c.end();
  }
}

/** A digest of the fixture tables' contents and of the tables that exist: what "nothing changed" is checked against. */
const pgState = (ep: SourceEndpoint) =>
  asOwner(
    ep,
    async (q) =>
      (
        await q(
          `select (select md5(string_agg(t::text, ',' order by id)) from customers t) as c,
                (select md5(string_agg(t::text, ',' order by id)) from orders t) as o,
                (select count(*) from order_items) as i,
                (select string_agg(relname, ',' order by relname) from pg_class where relnamespace = 'public'::regnamespace) as rels,
                (select last_value from order_seq) as seq`,
        )
      )[0],
  );

const mysqlState = (ep: SourceEndpoint) =>
  asOwner(ep, async (q) => {
    await q('SET SESSION group_concat_max_len = 1000000');
    return (
      await q(
        `SELECT (SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', id, name, email, country) ORDER BY id)) FROM customers) AS c,
                (SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', id, customer_id, total, status) ORDER BY id)) FROM orders) AS o,
                (SELECT COUNT(*) FROM order_items) AS i,
                (SELECT GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()) AS rels`,
      )
    )[0];
  });

const seed = (ep: SourceEndpoint, statements: string[]) =>
  asOwner(ep, async (q) => {
    for (const s of statements) await q(s);
  });

const ENGINES = [
  { engine: 'postgresql' as const, source: 'postgres' as const, corpus: pgCorpus, state: pgState },
  { engine: 'mariadb' as const, source: 'mysql' as const, corpus: mysqlCorpus, state: mysqlState },
];

/**
 * Database sources against real PostgreSQL 17 and MariaDB 11.8 (managed databases of this installation, reached as
 * external servers at their container's address and by reference): the refusal corpus is refused with its rule and
 * reaches nothing; ordinary analytics answer; with the parser switched off, the READ ONLY transaction alone stops every
 * write the corpus marks it can stop; ask refuses a model's destructive SQL; MCP goes through the same checks.
 */
describe('database sources and database intelligence', () => {
  let h: Harness;
  let org: Awaited<ReturnType<Harness['newOrgWithProject']>>;
  let api: ReturnType<typeof client>;
  let model: ProviderDouble;
  const servers: Record<string, { ep: SourceEndpoint; sourceId: string; databaseId: string; containerId: string }> = {};
  const mcpClients: Client[] = [];

  beforeAll(async () => {
    h = await startHarness('sources', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      ALLOW_PRIVATE_DATABASE_SOURCES: 'true',
      ALLOW_PRIVATE_AI_PROVIDERS: 'true',
    });
    org = await h.newOrgWithProject('pro');
    api = client(h, org.token);
    model = await startOpenAiDouble({ apiKey: 'sk-test-sources', models: ['gpt-4o-mini'] });
    for (const e of ENGINES) {
      const db = await managedDatabase(h, api, org.projectId, e.engine);
      const ep: SourceEndpoint = {
        engine: e.source,
        host: db.address,
        address: db.address,
        port: e.engine === 'postgresql' ? 5432 : 3306,
        database: db.creds.database,
        user: db.creds.user,
        password: db.creds.password,
        tls: 'disable',
      };
      await seed(ep, e.corpus.FIXTURE_SQL);
      const made = await api.post<Data<{ id: string }>>('/platform/database-sources', {
        projectId: org.projectId,
        engine: e.source,
        host: db.address,
        port: ep.port,
        database: ep.database,
        user: ep.user,
        password: ep.password,
        tls: false,
      });
      expect(made.status).toBe(201);
      servers[e.source] = { ep, sourceId: made.body.data.id, databaseId: db.id, containerId: db.containerId };
    }
  }, 600_000);

  afterAll(async () => {
    for (const c of mcpClients) await c.close().catch(() => undefined);
    await model?.close();
    for (const s of Object.values(servers)) await api.del(`/platform/databases/${s.databaseId}`).catch(() => undefined);
    await h?.stop();
  }, 180_000);

  it('keeps the password write-only, lists, renames, and tests what the user may do', async () => {
    const { sourceId, ep } = servers.postgres!;
    const got = await api.get<Data>(`/platform/database-sources/${sourceId}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      engine: 'postgres',
      host: ep.address,
      user: ep.user,
      passwordSet: true,
      tls: 'disable',
    });
    expect(JSON.stringify(got.body)).not.toContain(ep.password);
    const list = await api.get<Data<{ sources: { id: string }[] }>>('/platform/database-sources');
    expect(list.body.data.sources.map((s) => s.id)).toEqual(expect.arrayContaining([sourceId]));
    const renamed = await api.call<Data>('PATCH', `/platform/database-sources/${sourceId}`, { name: 'warehouse' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe('warehouse');

    for (const e of ENGINES) {
      const t = await api.post<Data<Body>>(`/platform/database-sources/${servers[e.source]!.sourceId}/test`, {});
      expect(t.status).toBe(200);
      // The app's user owns its database: it can write and make tables, which the answer says.
      expect(t.body.data).toMatchObject({ ok: true, readOnlyUser: false, privileges: { write: true, ddl: true } });
      expect(String(t.body.data.serverVersion)).toMatch(
        e.engine === 'postgresql' ? /^PostgreSQL 17/ : /^MariaDB 11\.8/,
      );
      expect((t.body.data.warnings as string[]).join(' ')).toMatch(/read-only role/);
    }

    // A wrong password: the test says so, and a query is refused as unreachable, not as a server error.
    const bad = await api.post<Data<{ id: string }>>('/platform/database-sources', {
      engine: 'postgres',
      host: ep.address,
      port: ep.port,
      database: ep.database,
      user: ep.user,
      password: 'not-the-password',
      tls: false,
    });
    const failed = await api.post<Data<Body>>(`/platform/database-sources/${bad.body.data.id}/test`, {});
    expect(failed.body.data).toMatchObject({ ok: false });
    expect(String(failed.body.data.error)).toMatch(/password authentication failed/);
    const q = await api.post<ErrorBody>(`/platform/database-sources/${bad.body.data.id}/query`, { sql: 'SELECT 1' });
    expect(q.status).toBe(400);
    expect(q.body.message).toMatch(/^Could not connect to the source or log in: .*password authentication failed/);
    expect((await api.del(`/platform/database-sources/${bad.body.data.id}`)).status).toBe(204);

    // Every change, test, schema read and query is in the audit trail, and no password is.
    await api.get(`/platform/database-sources/${sourceId}/schema`);
    await api.post(`/platform/database-sources/${sourceId}/query`, { sql: 'SELECT 1' });
    const trail = await api.get<{
      data: { events: { action: string; resource: { type: string; id: string | null } }[] };
    }>('/platform/audit?limit=100');
    const actions = (id: string) => trail.body.data.events.filter((e) => e.resource.id === id).map((e) => e.action);
    expect(actions(sourceId)).toEqual(
      expect.arrayContaining([
        'database-source.create',
        'database-source.update',
        'database-source.test',
        'database-source.schema',
        'database-source.query',
      ]),
    );
    expect(actions(bad.body.data.id)).toEqual(
      expect.arrayContaining(['database-source.create', 'database-source.delete']),
    );
    expect(JSON.stringify(trail.body)).not.toContain(ep.password);
    expect(JSON.stringify(trail.body)).not.toContain('not-the-password');
  });

  it('reports a read-only role as such (the README’s recipe)', async () => {
    const { containerId, ep } = servers.postgres!;
    await adminSql(
      h,
      containerId,
      'postgresql',
      `CREATE ROLE reader LOGIN PASSWORD 'reader-pass'; GRANT CONNECT ON DATABASE app TO reader; GRANT USAGE ON SCHEMA public TO reader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;`,
    );
    const made = await api.post<Data<{ id: string }>>('/platform/database-sources', {
      engine: 'postgres',
      host: ep.address,
      port: 5432,
      database: 'app',
      user: 'reader',
      password: 'reader-pass',
      tls: 'disable',
    });
    const t = await api.post<Data<Body>>(`/platform/database-sources/${made.body.data.id}/test`, {});
    expect(t.body.data).toMatchObject({
      ok: true,
      readOnlyUser: true,
      privileges: { write: false, ddl: false, superuser: false, files: false },
      warnings: [],
    });
    const q = await api.post<Data<{ readOnly: Body }>>(`/platform/database-sources/${made.body.data.id}/query`, {
      sql: 'SELECT count(*) FROM customers',
    });
    expect(q.body.data.readOnly).toMatchObject({ transaction: true, userCanWrite: false });
  });

  it('describes the schema: tables, columns, keys and row estimates', async () => {
    for (const e of ENGINES) {
      const r = await api.get<Data<{ schemas: { name: string; tables: Body[] }[] }>>(
        `/platform/database-sources/${servers[e.source]!.sourceId}/schema`,
      );
      expect(r.status).toBe(200);
      const tables = r.body.data.schemas.flatMap((s) => s.tables);
      const orders = tables.find((t) => t.name === 'orders')!;
      expect(orders).toMatchObject({ kind: 'table', primaryKey: ['id'] });
      expect(orders.foreignKeys).toEqual([
        expect.objectContaining({
          columns: ['customer_id'],
          references: expect.objectContaining({ table: 'customers', columns: ['id'] }),
        }),
      ]);
      expect((orders.columns as { name: string }[]).map((c) => c.name)).toEqual(
        expect.arrayContaining(['id', 'customer_id', 'total', 'status', 'created_at']),
      );
    }
  });

  describe.each(ENGINES)('$engine', ({ source, corpus, state }) => {
    it('refuses every statement of the corpus with its rule, and nothing reaches the database', async () => {
      const { sourceId, ep } = servers[source]!;
      expect(corpus.REFUSED.length).toBeGreaterThanOrEqual(60);
      const before = await state(ep);
      const wrong: string[] = [];
      for (const e of corpus.REFUSED) {
        const r = await api.post<ErrorBody>(`/platform/database-sources/${sourceId}/query`, { sql: e.sql });
        if (ruleOf(r) !== e.rule) wrong.push(`${e.sql} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
      expect(wrong).toEqual([]);
      expect(await state(ep)).toEqual(before);
    });

    it('answers ordinary analytical queries with rows', async () => {
      const { sourceId } = servers[source]!;
      expect(corpus.ALLOWED.length).toBeGreaterThanOrEqual(25);
      const wrong: string[] = [];
      for (const e of corpus.ALLOWED as (string | { sql: string })[]) {
        const r = await api.post<Data<QueryAnswer>>(`/platform/database-sources/${sourceId}/query`, { sql: sqlOf(e) });
        if (r.status !== 200 || r.body.data.rowCount < 1)
          wrong.push(`${sqlOf(e)} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      }
      expect(wrong).toEqual([]);
    });

    it('with the parser switched off, the READ ONLY transaction alone stops every write it can stop', async () => {
      const { ep } = servers[source]!;
      const stoppable = corpus.REFUSED.filter((e) => !e.escapesReadOnly);
      expect(stoppable.length).toBeGreaterThan(10);
      const before = await state(ep);
      const ran: string[] = [];
      for (const e of stoppable) {
        // Straight to the second layer, as if the parser had let it through.
        const outcome = await runReadOnly(ep, e.sql, [], { maxRows: 10, maxBytes: 65536, timeoutMs: 5000 }).then(
          () => 'ran',
          (err: unknown) => (err instanceof SourceQueryError ? `refused (${err.kind})` : `threw ${String(err)}`),
        );
        if (!outcome.startsWith('refused')) ran.push(`${e.sql} → ${outcome}`);
      }
      expect(ran).toEqual([]);
      expect(await state(ep)).toEqual(before);
    });

    it('caps rows and bytes, binds parameters, and refuses a second statement at the protocol too', async () => {
      const { sourceId, ep } = servers[source]!;
      const capped = await api.post<Data<QueryAnswer & { truncatedBy: string }>>(
        `/platform/database-sources/${sourceId}/query`,
        { sql: 'SELECT id FROM order_items CROSS JOIN customers', maxRows: 7 },
      );
      expect(capped.body.data).toMatchObject({ rowCount: 7, truncated: true, truncatedBy: 'rows' });
      const param = await api.post<Data<QueryAnswer>>(`/platform/database-sources/${sourceId}/query`, {
        sql:
          source === 'postgres'
            ? 'SELECT name FROM customers WHERE id = $1'
            : 'SELECT name FROM customers WHERE id = ?',
        params: [1],
      });
      expect(param.body.data.rowCount).toBe(1);
      const stacked = await runReadOnly(ep, 'SELECT 1; DELETE FROM order_items', [], {
        maxRows: 10,
        maxBytes: 65536,
        timeoutMs: 5000,
      }).then(
        () => 'ran',
        (err: unknown) => (err instanceof SourceQueryError ? err.kind : String(err)),
      );
      expect(stacked).toBe('statement');
      const bytes = await runReadOnly(ep, 'SELECT * FROM order_items', [], {
        maxRows: 1000,
        maxBytes: 200,
        timeoutMs: 5000,
      });
      expect(bytes).toMatchObject({ truncated: true, truncatedBy: 'bytes' });
    });
  });

  it('adds a managed database by reference and queries it; another organisation sees none of it', async () => {
    const { databaseId } = servers.postgres!;
    const made = await api.post<Data<{ id: string; databaseId: string; host: null }>>('/platform/database-sources', {
      projectId: org.projectId,
      databaseId,
      name: 'by-reference',
    });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ databaseId, host: null, engine: 'postgres' });
    const q = await api.post<Data<QueryAnswer>>(`/platform/database-sources/${made.body.data.id}/query`, {
      sql: 'SELECT count(*) AS n FROM customers',
    });
    expect(q.status).toBe(200);
    expect(Number(q.body.data.rows[0]![0])).toBeGreaterThan(0);
    const patch = await api.call<ErrorBody>('PATCH', `/platform/database-sources/${made.body.data.id}`, {
      host: 'example.com',
    });
    expect(patch.status).toBe(400);

    const other = client(h, (await h.newOrg('pro')).token);
    const id = made.body.data.id;
    for (const r of [
      await other.get(`/platform/database-sources/${id}`),
      await other.get(`/platform/database-sources/${id}/schema`),
      await other.post(`/platform/database-sources/${id}/query`, { sql: 'SELECT 1' }),
      await other.post(`/platform/database-sources/${id}/test`, {}),
      await other.call('PATCH', `/platform/database-sources/${id}`, { name: 'mine' }),
      await other.del(`/platform/database-sources/${id}`),
    ])
      expect(r.status).toBe(404);
    // Another organisation's database cannot be added by reference either.
    const stolen = await other.post<ErrorBody>('/platform/database-sources', { databaseId });
    expect(stolen.status).toBe(404);
    expect((await other.get<Data<{ total: number }>>('/platform/database-sources')).body.data.total).toBe(0);
  });

  it('refuses metadata addresses and names that resolve to them, even where private networks are allowed', async () => {
    for (const host of ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']) {
      const r = await api.post<ErrorBody>('/platform/database-sources', {
        engine: 'mysql',
        host,
        port: 3306,
        database: 'x',
        user: 'x',
        password: 'x',
        tls: 'require',
      });
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/host refused/);
    }
  });

  it('asks: the model’s SQL runs through the same checks; a destructive answer is refused and kept as blocked', async () => {
    const { sourceId } = servers.postgres!;
    const provider = await api.post<Data<{ id: string }>>('/platform/ai-providers', {
      name: 'sql-writer',
      kind: 'openai_compatible',
      baseUrl: model.baseUrl,
      apiKey: model.apiKey,
      defaultModel: 'gpt-4o-mini',
    });
    expect(provider.status).toBe(200);
    const call = (sql: string, explanation: string) =>
      ({
        stream: openai.toolCalls([
          { id: 'call_1', name: 'answer_with_sql', args: [JSON.stringify({ sql, explanation })] },
        ]),
      }) as const;

    model.reply(
      call('SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC', 'Customers per country.'),
    );
    const good = await api.post<Data<Body & { result: QueryAnswer }>>(`/platform/database-sources/${sourceId}/ask`, {
      question: 'How many customers per country?',
    });
    expect(good.status).toBe(200);
    expect(good.body.data.error).toBeNull();
    expect(good.body.data).toMatchObject({ status: 'answered', explanation: 'Customers per country.' });
    expect(good.body.data.result.rowCount).toBeGreaterThan(0);
    // The model was given the schema, and asked through the answer tool.
    const sent = model.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body!;
    expect(JSON.stringify(sent.messages)).toMatch(/customers/);
    expect(JSON.stringify(sent.tools)).toMatch(/answer_with_sql/);

    const before = await pgState(servers.postgres!.ep);
    model.reply(call('WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone', 'Counts orders.'));
    const bad = await api.post<ErrorBody>(`/platform/database-sources/${sourceId}/ask`, {
      question: 'How many orders?',
    });
    expect(ruleOf(bad)).toBe('data-modifying-cte');
    expect(bad.body.message).toMatch(/the SQL the model wrote was refused/);
    expect(await pgState(servers.postgres!.ep)).toEqual(before);

    const history = await api.get<Data<{ questions: Body[]; total: number }>>(
      `/platform/database-sources/${sourceId}/questions`,
    );
    expect(history.body.data.questions.map((q) => q.status)).toEqual(['blocked', 'answered']);
    expect(history.body.data.questions[0]).toMatchObject({ rule: 'data-modifying-cte', question: 'How many orders?' });
  });

  it('serves agents through MCP: list, describe, query (rows fenced as untrusted), refusals with the rule', async () => {
    const { sourceId } = servers.mysql!;
    const { client: c, call } = await connectAgent(h.baseUrl, org.token, 'sources-test');
    mcpClients.push(c);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['list_database_sources', 'describe_database_schema', 'query_database', 'ask_database']),
    );
    const listed = await call('list_database_sources', {});
    expect(listed.s.sources.map((s: Body) => s.id)).toEqual(expect.arrayContaining([sourceId]));
    const described = await call('describe_database_schema', { sourceId });
    expect(described.s.tables).toMatch(/^<untrusted-schema-[0-9a-f]{12}>\n/);
    expect(described.s.tables).toMatch(/^\S+\.order_items \(table, ~?\d+ rows\): /m);
    const q = await call('query_database', {
      sourceId,
      sql: "SELECT name FROM customers WHERE country = 'DE' ORDER BY id",
    });
    expect(q.isError).toBe(false);
    // The column names first (a query's aliases are its author's text too), then one row per line.
    expect(q.s.rows).toMatch(/^<untrusted-rows-[0-9a-f]{12}>\n\["name"\]\n\["Customer 5"\]\n/);
    expect(q.s.columnTypes).toEqual([expect.any(String)]);
    expect(q.s.rows).toMatch(/\n<\/untrusted-rows-[0-9a-f]{12}>$/);
    const refused = await call('query_database', { sourceId, sql: 'SELECT 1; DROP TABLE customers' });
    expect(refused.isError).toBe(true);
    expect(refused.s.code).toBe('INVALID_REQUEST');
    expect(refused.s.message).toMatch(/^blocked by a safety check \(rule multiple-statements\)/);
    expect(refused.s.details.rule).toBe('multiple-statements');
  });
});
