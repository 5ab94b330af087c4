import { checkMysql } from './mysql';
import { checkPostgres } from './postgres';
import type { SafetyVerdict, SqlDialect } from './rules';

export type { SafetyRule, SafetyVerdict, SqlDialect } from './rules';
export { SAFETY_RULES } from './rules';

/**
 * The first of two layers between a user's SQL and an external database: it admits exactly one SELECT,
 * WITH … SELECT or EXPLAIN (without ANALYZE) and refuses anything else it can see, read by a real parser of the
 * source's dialect (never by regular expressions) and walked through every subquery, CTE and function argument.
 *
 * It does not pretend to catch everything. The second layer, where the statement is run, executes it alone in a
 * READ ONLY transaction with a statement timeout: that is why a function this layer does not know (a user-defined
 * one) may pass here — any table or sequence write it attempts is refused by the database there. This layer is what
 * stops the things that transaction cannot: a statement that ends or escapes the transaction (COMMIT, stacked
 * statements, MySQL DDL that commits implicitly), writes to server files (COPY … TO, INTO OUTFILE, lo_export),
 * session state and locks that outlive it (set_config, advisory and user-level locks), signals to other sessions,
 * network calls (dblink), and waits (pg_sleep, SLEEP).
 */
export async function checkStatement(dialect: SqlDialect, sql: string): Promise<SafetyVerdict> {
  return dialect === 'postgres' ? checkPostgres(sql) : checkMysql(sql);
}
