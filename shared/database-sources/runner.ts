import type { QueryLimits, QueryResult, SourceEndpoint, SourceProbe, SourceSchema } from './endpoint';
import { describeMysql, probeMysql, runMysql } from './mysql';
import { describePostgres, probePostgres, runPostgres } from './postgres';

/**
 * The second layer of the safety check: one statement, alone, in a READ ONLY transaction with a time limit and caps,
 * on a connection of its own. It runs only what the parser layer (shared/sql-safety) has let through; on its own it
 * stops the writes a read-only transaction stops, and nothing more (docs/architecture.md, "Database sources").
 */
export function runReadOnly(
  ep: SourceEndpoint,
  sql: string,
  params: unknown[],
  limits: QueryLimits,
): Promise<QueryResult> {
  return ep.engine === 'postgres' ? runPostgres(ep, sql, params, limits) : runMysql(ep, sql, params, limits);
}

export function probeSource(ep: SourceEndpoint, timeoutMs: number): Promise<SourceProbe> {
  return ep.engine === 'postgres' ? probePostgres(ep, timeoutMs) : probeMysql(ep, timeoutMs);
}

export function describeSource(ep: SourceEndpoint, timeoutMs: number): Promise<SourceSchema> {
  return ep.engine === 'postgres' ? describePostgres(ep, timeoutMs) : describeMysql(ep, timeoutMs);
}
