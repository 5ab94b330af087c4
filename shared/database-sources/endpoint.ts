import type { SourceEngine, SourcePrivileges, SourceTls } from './types';

/** Where and as whom one query connects: the address was checked (and is pinned) before anything is sent. */
export interface SourceEndpoint {
  engine: SourceEngine;
  /** The host name as the user wrote it: TLS's server name, and what messages show. */
  host: string;
  /** The checked address the connection goes to; resolving the name again would reopen DNS rebinding. */
  address: string;
  port: number;
  database: string;
  user: string;
  password: string;
  tls: SourceTls;
}

export interface QueryLimits {
  maxRows: number;
  maxBytes: number;
  timeoutMs: number;
}

export interface QueryColumn {
  name: string;
  type: string;
}

export interface QueryResult {
  columns: QueryColumn[];
  /** Each row's values in the columns' order, as JSON can carry them (big numbers and decimals as strings). */
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  /** Which cap cut the answer short, when one did. */
  truncatedBy: 'rows' | 'bytes' | null;
  timing: { connectMs: number; queryMs: number; totalMs: number };
}

export interface SourceProbe {
  serverVersion: string;
  privileges: SourcePrivileges;
}

export interface SchemaColumn {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
}

export interface SchemaTable {
  name: string;
  kind: 'table' | 'view' | 'materialized_view' | 'foreign_table' | 'partitioned_table';
  rowEstimate: number | null;
  columns: SchemaColumn[];
  primaryKey: string[];
  foreignKeys: { name: string; columns: string[]; references: { schema: string; table: string; columns: string[] } }[];
}

export interface SourceSchema {
  schemas: { name: string; tables: SchemaTable[] }[];
  /** More tables exist than the description carries. */
  truncated: boolean;
}

/**
 * Why a query produced no answer. `connect`: the server could not be reached or refused the login; `statement`: the
 * database refused the statement (its own message and code, which the source's owner needs); `timeout`: the statement
 * ran past its limit and was cancelled.
 */
export class SourceQueryError extends Error {
  override name = 'SourceQueryError';
  constructor(
    readonly kind: 'connect' | 'statement' | 'timeout',
    message: string,
    readonly sqlState?: string,
  ) {
    super(message);
  }
}

/** The most tables a schema description carries: an agent's prompt, not a catalogue dump. */
export const MAX_SCHEMA_TABLES = 300;

/** A value as JSON carries it: dates as ISO text, bytes as `\x…` hex (PostgreSQL's own spelling), big integers as text. */
export function jsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (Buffer.isBuffer(v)) return `\\x${v.toString('hex')}`;
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(jsonValue);
  return v;
}

/** Collects rows under both caps: `add` answers false once the answer is full. */
export function rowCollector(limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>) {
  const rows: unknown[][] = [];
  let bytes = 0;
  let truncatedBy: 'rows' | 'bytes' | null = null;
  return {
    rows,
    get truncatedBy() {
      return truncatedBy;
    },
    add(row: unknown[]): boolean {
      if (truncatedBy) return false;
      if (rows.length >= limits.maxRows) {
        truncatedBy = 'rows';
        return false;
      }
      const values = row.map(jsonValue);
      const size = Buffer.byteLength(JSON.stringify(values));
      if (bytes + size > limits.maxBytes) {
        truncatedBy = 'bytes';
        return false;
      }
      bytes += size;
      rows.push(values);
      return true;
    },
  };
}

/**
 * The schema one line per table, its columns with types and keys: what a model reads to write SQL, and what an agent
 * reads (fenced: every name in it is the source's).
 */
export function schemaLines(schema: SourceSchema): string[] {
  const lines: string[] = [];
  for (const s of schema.schemas)
    for (const t of s.tables) {
      const cols = t.columns.map((c) => `${c.name} ${c.type}${t.primaryKey.includes(c.name) ? ' PK' : ''}`);
      const fks = t.foreignKeys.map(
        (f) => `${f.columns.join(',')} -> ${f.references.table}(${f.references.columns.join(',')})`,
      );
      lines.push(
        `${s.name}.${t.name} (${t.kind}${t.rowEstimate !== null ? `, ~${t.rowEstimate} rows` : ''}): ${cols.join(', ')}${fks.length ? `; FK ${fks.join('; ')}` : ''}`,
      );
    }
  return lines;
}

/** The schema as the model reads it: one line per table. */
export const schemaPrompt = (schema: SourceSchema): string => schemaLines(schema).join('\n');
