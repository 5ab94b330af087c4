import { performance } from 'node:perf_hooks';

import pg from 'pg';
import Cursor from 'pg-cursor';

import { ignore } from '../ignore';
import {
  MAX_SCHEMA_TABLES,
  type QueryLimits,
  type QueryResult,
  rowCollector,
  type SchemaTable,
  type SourceEndpoint,
  type SourceProbe,
  SourceQueryError,
  type SourceSchema,
} from './endpoint';

/** Names of the types a result most often carries; any other shows as its OID. */
const TYPE_NAMES: Record<number, string> = {
  16: 'boolean',
  17: 'bytea',
  18: 'char',
  19: 'name',
  20: 'bigint',
  21: 'smallint',
  23: 'integer',
  25: 'text',
  26: 'oid',
  114: 'json',
  700: 'real',
  701: 'double precision',
  1042: 'character',
  1043: 'character varying',
  1082: 'date',
  1083: 'time',
  1114: 'timestamp',
  1184: 'timestamptz',
  1186: 'interval',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
};

/** Dates and timestamps as the server wrote them: a JS Date would move a zone-less timestamp into this host's zone. */
const TEXT_TYPES = {
  getTypeParser: (oid: number, format?: string) =>
    [1082, 1083, 1114, 1184, 1186].includes(oid)
      ? (v: string) => v
      : (pg.types.getTypeParser as (o: number, f?: string) => (v: string) => unknown)(oid, format),
};

const tlsOptions = (ep: SourceEndpoint) =>
  ep.tls === 'disable'
    ? false
    : { servername: ep.host, rejectUnauthorized: ep.tls === 'verify', minVersion: 'TLSv1.2' as const };

function failure(err: unknown, phase: 'connect' | 'statement'): SourceQueryError {
  if (err instanceof SourceQueryError) return err;
  const e = err as { code?: string; message?: string };
  // 57014: canceled by statement_timeout (or by an operator; either way the statement did not finish).
  if (e.code === '57014')
    return new SourceQueryError('timeout', 'the statement ran past its time limit and was cancelled', e.code);
  const message = String(e.message ?? err);
  if (phase === 'connect' || !e.code) return new SourceQueryError('connect', message, e.code);
  return new SourceQueryError('statement', message, e.code);
}

/**
 * One connection of its own, inside a READ ONLY transaction with a statement timeout, rolled back and closed
 * whatever happens: nothing a statement does can outlive it, and no other request's session is touched.
 */
async function inReadOnly<T>(ep: SourceEndpoint, timeoutMs: number, fn: (c: pg.Client) => Promise<T>) {
  const started = performance.now();
  const client = new pg.Client({
    host: ep.address,
    port: ep.port,
    user: ep.user,
    password: ep.password,
    database: ep.database,
    ssl: tlsOptions(ep),
    application_name: 'slipway-query',
    connectionTimeoutMillis: 10_000,
    types: TEXT_TYPES,
  });
  // An error after the connection is up (the server going away) is reported by the query that meets it.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(ignore('the connection never opened; its failure is the one to report'));
    throw failure(err, 'connect');
  }
  const connectMs = performance.now() - started;
  // A backstop to the server's own timeout, for a server that stops answering altogether: the socket is cut, which
  // fails whatever waits on it. Not pg's query_timeout: its timer is cleared only by a query's callback, which a
  // cursor never calls, so each query would leave one running for its whole length.
  const backstop = setTimeout(
    () => (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy(),
    timeoutMs + 10_000,
  );
  try {
    await client.query('BEGIN');
    await client.query('SET TRANSACTION READ ONLY');
    // String literals as the parser layer read them (libpg-query assumes standard strings): `'\'` is one backslash.
    await client.query('SET LOCAL standard_conforming_strings = on');
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${Math.floor(timeoutMs) + 10_000}`);
    return { value: await fn(client), connectMs };
  } catch (err) {
    throw failure(err, 'statement');
  } finally {
    clearTimeout(backstop);
    // A connection the statement broke has nothing to roll back; closing it ends the transaction anyway.
    await client.query('ROLLBACK').catch(ignore('a broken connection rolls back by closing'));
    await client.end().catch(ignore('the connection is gone either way'));
  }
}

/**
 * Runs one statement through the extended protocol (Parse refuses a string holding more than one statement) and
 * reads it through a portal in batches, so a huge result is never fetched past the caps.
 */
export async function runPostgres(
  ep: SourceEndpoint,
  sql: string,
  params: unknown[],
  limits: QueryLimits,
): Promise<QueryResult> {
  const started = performance.now();
  let queryStarted = 0;
  const { value, connectMs } = await inReadOnly(ep, limits.timeoutMs, async (client) => {
    queryStarted = performance.now();
    const cursor = client.query(new Cursor(sql, params, { rowMode: 'array', types: TEXT_TYPES }));
    const rows = rowCollector(limits);
    let fields: { name: string; dataTypeID: number }[] = [];
    for (;;) {
      const batch = await new Promise<unknown[][]>((resolve, reject) =>
        cursor.read(Math.min(500, limits.maxRows + 1), (err, got, result) => {
          if (err) return reject(err);
          if (result?.fields?.length) fields = result.fields;
          resolve(got as unknown[][]);
        }),
      );
      if (batch.length === 0) break;
      if (!batch.every((row) => rows.add(row))) break;
    }
    await cursor.close().catch(ignore('the transaction is rolled back and the connection closed next'));
    return {
      columns: fields.map((f) => ({ name: f.name, type: TYPE_NAMES[f.dataTypeID] ?? `oid:${f.dataTypeID}` })),
      rows: rows.rows,
      truncatedBy: rows.truncatedBy,
    };
  });
  const ended = performance.now();
  return {
    columns: value.columns,
    rows: value.rows,
    rowCount: value.rows.length,
    truncated: value.truncatedBy !== null,
    truncatedBy: value.truncatedBy,
    timing: {
      connectMs: Math.round(connectMs),
      queryMs: Math.round(ended - queryStarted),
      totalMs: Math.round(ended - started),
    },
  };
}

const PROBE = `
select current_setting('server_version') as version,
  r.rolsuper as superuser,
  (has_database_privilege(current_database(), 'CREATE')
    or exists (select 1 from pg_namespace n where n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema'
               and has_schema_privilege(n.oid, 'CREATE'))) as ddl,
  exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema')
            and (has_table_privilege(c.oid, 'INSERT') or has_table_privilege(c.oid, 'UPDATE')
                 or has_table_privilege(c.oid, 'DELETE') or has_table_privilege(c.oid, 'TRUNCATE'))) as write,
  (pg_has_role(current_user, 'pg_read_server_files', 'MEMBER')
    or pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
    or pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER')) as files
from pg_roles r where r.rolname = current_user`;

/** The server's version and what the source's user may do beyond reading (a superuser may do everything). */
export async function probePostgres(ep: SourceEndpoint, timeoutMs: number): Promise<SourceProbe> {
  const { value } = await inReadOnly(ep, timeoutMs, async (c) => (await c.query(PROBE)).rows[0]);
  const r = value as { version: string; superuser: boolean; ddl: boolean; write: boolean; files: boolean };
  const su = r.superuser === true;
  return {
    serverVersion: `PostgreSQL ${r.version}`,
    privileges: { superuser: su, write: su || r.write, ddl: su || r.ddl, files: su || r.files },
  };
}

const HIDDEN = `n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_toast%' and n.nspname not like 'pg\\_temp%'`;

const KINDS: Record<string, SchemaTable['kind']> = {
  r: 'table',
  p: 'partitioned_table',
  v: 'view',
  m: 'materialized_view',
  f: 'foreign_table',
};

/** Schemas, tables and views, columns, keys and the planner's row estimates, as the catalogue has them. */
export async function describePostgres(ep: SourceEndpoint, timeoutMs: number): Promise<SourceSchema> {
  const { value } = await inReadOnly(ep, timeoutMs, async (c) => {
    const tables = await c.query<{ oid: number; schema: string; name: string; kind: string; estimate: string }>(
      `select c.oid, n.nspname as schema, c.relname as name, c.relkind as kind, c.reltuples::bigint as estimate
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where c.relkind in ('r', 'p', 'v', 'm', 'f') and ${HIDDEN} and not c.relispartition
       order by n.nspname, c.relname limit ${MAX_SCHEMA_TABLES + 1}`,
    );
    const shown = tables.rows.slice(0, MAX_SCHEMA_TABLES);
    const oids = shown.map((t) => t.oid);
    const columns = await c.query<{ rel: number; name: string; type: string; notnull: boolean; def: string | null }>(
      `select a.attrelid::int as rel, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
              a.attnotnull as notnull, pg_get_expr(d.adbin, d.adrelid) as def
       from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
       where a.attrelid = any($1::oid[]) and a.attnum > 0 and not a.attisdropped
       order by a.attrelid, a.attnum`,
      [oids],
    );
    const keys = await c.query<{
      rel: number;
      type: string;
      name: string;
      columns: string[];
      ref_schema: string | null;
      ref_table: string | null;
      ref_columns: string[] | null;
    }>(
      `select con.conrelid::int as rel, con.contype as type, con.conname as name,
              array(select a.attname from unnest(con.conkey) with ordinality k(n, i)
                    join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by k.i)::text[] as columns,
              fn.nspname as ref_schema, fc.relname as ref_table,
              array(select a.attname from unnest(con.confkey) with ordinality k(n, i)
                    join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n order by k.i)::text[] as ref_columns
       from pg_constraint con
       left join pg_class fc on fc.oid = con.confrelid left join pg_namespace fn on fn.oid = fc.relnamespace
       where con.conrelid = any($1::oid[]) and con.contype in ('p', 'f')
       order by con.conrelid, con.conname`,
      [oids],
    );
    return { tables: tables.rows, shown, columns: columns.rows, keys: keys.rows };
  });
  const bySchema = new Map<string, SchemaTable[]>();
  for (const t of value.shown) {
    const estimate = Number(t.estimate);
    const table: SchemaTable = {
      name: t.name,
      kind: KINDS[t.kind] ?? 'table',
      // -1: never analysed (PostgreSQL 14 on), so the planner does not know.
      rowEstimate: Number.isFinite(estimate) && estimate >= 0 ? estimate : null,
      columns: value.columns
        .filter((col) => col.rel === Number(t.oid))
        .map((col) => ({ name: col.name, type: col.type, nullable: !col.notnull, default: col.def })),
      primaryKey: value.keys.find((k) => k.rel === Number(t.oid) && k.type === 'p')?.columns ?? [],
      foreignKeys: value.keys
        .filter((k) => k.rel === Number(t.oid) && k.type === 'f')
        .map((k) => ({
          name: k.name,
          columns: k.columns,
          references: { schema: k.ref_schema ?? '', table: k.ref_table ?? '', columns: k.ref_columns ?? [] },
        })),
    };
    bySchema.set(t.schema, [...(bySchema.get(t.schema) ?? []), table]);
  }
  return {
    schemas: [...bySchema].map(([name, tables]) => ({ name, tables })),
    truncated: value.tables.length > MAX_SCHEMA_TABLES,
  };
}
