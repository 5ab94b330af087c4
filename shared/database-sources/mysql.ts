import net from 'node:net';
import { performance } from 'node:perf_hooks';

import mysql from 'mysql2';

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

/** Column type names by the protocol's type code. */
const TYPE_NAMES = Object.fromEntries(
  Object.entries(mysql.Types as unknown as Record<string, number>).map(([name, code]) => [code, name.toLowerCase()]),
) as Record<number, string>;

function failure(err: unknown, phase: 'connect' | 'statement'): SourceQueryError {
  if (err instanceof SourceQueryError) return err;
  const e = err as { code?: string; sqlState?: string; errno?: number; message?: string; fatal?: boolean };
  // 1969: MariaDB's max_statement_time; 3024: MySQL's max_execution_time.
  if (e.errno === 1969 || e.errno === 3024)
    return new SourceQueryError('timeout', 'the statement ran past its time limit and was cancelled', e.sqlState);
  const message = String(e.message ?? err);
  if (phase === 'connect' || e.errno === undefined) return new SourceQueryError('connect', message, e.sqlState);
  return new SourceQueryError('statement', message, e.sqlState);
}

type Conn = mysql.Connection;

const run = (c: Conn, sql: string, values: unknown[] = []) =>
  new Promise<unknown[]>((resolve, reject) =>
    c.query({ sql, values, rowsAsArray: false }, (err, rows) => (err ? reject(err) : resolve(rows as unknown[]))),
  );

/**
 * One connection of its own: multiple statements off, `LOAD DATA LOCAL` off (the server could otherwise ask this host
 * for any file), the server's statement time limit set, then a READ ONLY transaction. The connection is destroyed at
 * the end whatever happened, which rolls back anything left.
 */
async function inReadOnly<T>(ep: SourceEndpoint, timeoutMs: number, fn: (c: Conn) => Promise<T>) {
  const started = performance.now();
  const conn = mysql.createConnection({
    // The name as written is TLS's server name; the socket goes to the checked address.
    host: ep.host,
    port: ep.port,
    stream: () => net.connect(ep.port, ep.address),
    user: ep.user,
    password: ep.password,
    database: ep.database,
    ssl:
      ep.tls === 'disable'
        ? undefined
        : { rejectUnauthorized: ep.tls === 'verify', verifyIdentity: ep.tls === 'verify' },
    multipleStatements: false,
    flags: ['-LOCAL_FILES', '-MULTI_STATEMENTS', '-MULTI_RESULTS'],
    infileStreamFactory: () => {
      throw new Error('LOAD DATA LOCAL is not allowed');
    },
    connectTimeout: 10_000,
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  conn.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => conn.connect((err) => (err ? reject(err) : resolve())));
  } catch (err) {
    conn.destroy();
    throw failure(err, 'connect');
  }
  const connectMs = performance.now() - started;
  try {
    const [version] = (await run(conn, 'SELECT VERSION() AS v')) as { v: string }[];
    if (/mariadb/i.test(version?.v ?? ''))
      await run(conn, `SET SESSION max_statement_time = ${(Math.max(1, timeoutMs) / 1000).toFixed(3)}`);
    else await run(conn, `SET SESSION max_execution_time = ${Math.max(1, Math.floor(timeoutMs))}`);
    await run(conn, `SET SESSION lock_wait_timeout = ${Math.max(1, Math.ceil(timeoutMs / 1000))}`);
    await run(conn, 'START TRANSACTION READ ONLY');
    return { value: await fn(conn), connectMs, version: version?.v ?? '' };
  } catch (err) {
    throw failure(err, 'statement');
  } finally {
    conn.destroy();
  }
}

/**
 * Runs one statement (the text protocol with multiple statements off: a second statement is a syntax error) and
 * streams its rows, leaving the rest unread once a cap is reached (the connection is destroyed, which ends it).
 */
export async function runMysql(
  ep: SourceEndpoint,
  sql: string,
  params: unknown[],
  limits: QueryLimits,
): Promise<QueryResult> {
  const started = performance.now();
  let queryStarted = 0;
  const { value, connectMs } = await inReadOnly(ep, limits.timeoutMs, (conn) => {
    queryStarted = performance.now();
    const rows = rowCollector(limits);
    let fields: { name: string; columnType?: number; type?: number }[] = [];
    return new Promise<{ columns: QueryResult['columns']; rows: unknown[][]; truncatedBy: QueryResult['truncatedBy'] }>(
      (resolve, reject) => {
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          resolve({
            columns: fields.map((f) => ({ name: f.name, type: TYPE_NAMES[f.columnType ?? f.type ?? -1] ?? 'unknown' })),
            rows: rows.rows,
            truncatedBy: rows.truncatedBy,
          });
        };
        const q = conn.query({ sql, values: params, rowsAsArray: true });
        q.on('fields', (f: typeof fields) => (fields = f ?? []));
        q.on('result', (row: unknown) => {
          if (done) return;
          if (Array.isArray(row)) {
            if (!rows.add(row)) {
              conn.pause();
              finish();
            }
          }
        });
        q.on('error', (err: unknown) => {
          if (!done) {
            done = true;
            reject(err);
          }
        });
        q.on('end', finish);
      },
    );
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

/** The current user's privileges as `information_schema` lists them, for the whole server or the source's database. */
const PRIVILEGES = `
SELECT PRIVILEGE_TYPE AS p FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = @me
UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = @me AND TABLE_SCHEMA = DATABASE()
UNION SELECT PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = @me AND TABLE_SCHEMA = DATABASE()`;

const WRITE = ['INSERT', 'UPDATE', 'DELETE'];
const DDL = ['CREATE', 'DROP', 'ALTER', 'INDEX', 'CREATE VIEW', 'CREATE ROUTINE', 'ALTER ROUTINE', 'TRIGGER', 'EVENT'];

export async function probeMysql(ep: SourceEndpoint, timeoutMs: number): Promise<SourceProbe> {
  const { value, version } = await inReadOnly(ep, timeoutMs, async (c) => {
    // Our own session variable, read by the next statement only (the user's statements cannot assign any).
    await run(
      c,
      "SET @me = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')",
    );
    return ((await run(c, PRIVILEGES)) as { p: string }[]).map((r) => r.p.toUpperCase());
  });
  const has = (list: string[]) => value.some((p) => list.includes(p));
  const superuser = has(['SUPER']);
  return {
    serverVersion: /mariadb/i.test(version) ? `MariaDB ${version.replace(/-MariaDB.*$/i, '')}` : `MySQL ${version}`,
    privileges: {
      superuser,
      write: superuser || has(WRITE),
      ddl: superuser || has(DDL),
      files: superuser || has(['FILE']),
    },
  };
}

const KINDS: Record<string, SchemaTable['kind']> = { 'BASE TABLE': 'table', VIEW: 'view', 'SYSTEM VIEW': 'view' };

/** The source database's tables and views, columns, keys and row estimates, from `information_schema`. */
export async function describeMysql(ep: SourceEndpoint, timeoutMs: number): Promise<SourceSchema> {
  const { value } = await inReadOnly(ep, timeoutMs, async (c) => {
    const tables = (await run(
      c,
      `SELECT TABLE_NAME AS name, TABLE_TYPE AS kind, TABLE_ROWS AS estimate FROM information_schema.TABLES
       WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME LIMIT ${MAX_SCHEMA_TABLES + 1}`,
    )) as { name: string; kind: string; estimate: string | number | null }[];
    const columns = (await run(
      c,
      `SELECT TABLE_NAME AS tbl, COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    )) as { tbl: string; name: string; type: string; nullable: string; def: string | null }[];
    const keys = (await run(
      c,
      `SELECT TABLE_NAME AS tbl, CONSTRAINT_NAME AS name, COLUMN_NAME AS col, REFERENCED_TABLE_SCHEMA AS refSchema,
              REFERENCED_TABLE_NAME AS refTable, REFERENCED_COLUMN_NAME AS refCol
       FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE()
       ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
    )) as {
      tbl: string;
      name: string;
      col: string;
      refSchema: string | null;
      refTable: string | null;
      refCol: string | null;
    }[];
    const [db] = (await run(c, 'SELECT DATABASE() AS db')) as { db: string }[];
    return { tables, columns, keys, db: db?.db ?? ep.database };
  });
  const shown = value.tables.slice(0, MAX_SCHEMA_TABLES);
  return {
    schemas: [
      {
        name: value.db,
        tables: shown.map((t) => {
          const own = value.keys.filter((k) => k.tbl === t.name);
          const fkNames = [...new Set(own.filter((k) => k.refTable).map((k) => k.name))];
          const estimate = t.estimate === null ? null : Number(t.estimate);
          return {
            name: t.name,
            kind: KINDS[t.kind] ?? 'table',
            rowEstimate: t.kind === 'BASE TABLE' && estimate !== null && Number.isFinite(estimate) ? estimate : null,
            columns: value.columns
              .filter((col) => col.tbl === t.name)
              .map((col) => ({ name: col.name, type: col.type, nullable: col.nullable === 'YES', default: col.def })),
            primaryKey: own.filter((k) => k.name === 'PRIMARY').map((k) => k.col),
            foreignKeys: fkNames.map((name) => {
              const parts = own.filter((k) => k.name === name);
              return {
                name,
                columns: parts.map((k) => k.col),
                references: {
                  schema: parts[0]?.refSchema ?? '',
                  table: parts[0]?.refTable ?? '',
                  columns: parts.map((k) => k.refCol ?? ''),
                },
              };
            }),
          };
        }),
      },
    ],
    truncated: value.tables.length > MAX_SCHEMA_TABLES,
  };
}
