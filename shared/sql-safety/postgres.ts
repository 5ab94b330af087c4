import { hasSqlDetails, parse, type ParseResult } from 'libpg-query';

import { deniedFunction, POSTGRES_DENIED } from './functions';
import { type Refusal, refuse, type SafetyVerdict, sendInstead } from './rules';

/**
 * PostgreSQL's own parser (libpg-query, the server's grammar compiled to WebAssembly) reads the statement exactly as
 * the server will: dollar quotes, nested comments, E'' strings and all. We then walk every node of the tree.
 */

const DML = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

/** Readable names for the statements people most often send; any other node type is named from its tag. */
const STATEMENT_NAMES: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
  CopyStmt: 'COPY',
  VariableSetStmt: 'SET/RESET',
  VariableShowStmt: 'SHOW',
  TransactionStmt: 'transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, …)',
  DoStmt: 'DO',
  CallStmt: 'CALL',
  PrepareStmt: 'PREPARE',
  ExecuteStmt: 'EXECUTE',
  DeallocateStmt: 'DEALLOCATE',
  ListenStmt: 'LISTEN',
  UnlistenStmt: 'UNLISTEN',
  NotifyStmt: 'NOTIFY',
  LockStmt: 'LOCK',
  VacuumStmt: 'VACUUM/ANALYZE',
  LoadStmt: 'LOAD',
  TruncateStmt: 'TRUNCATE',
  CreateTableAsStmt: 'CREATE TABLE … AS / CREATE MATERIALIZED VIEW',
  CreateStmt: 'CREATE TABLE',
  DropStmt: 'DROP',
  DiscardStmt: 'DISCARD',
  DeclareCursorStmt: 'DECLARE CURSOR',
  ClosePortalStmt: 'CLOSE',
  FetchStmt: 'FETCH/MOVE',
  CheckPointStmt: 'CHECKPOINT',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  GrantStmt: 'GRANT/REVOKE',
  AlterSystemStmt: 'ALTER SYSTEM',
};

function statementName(tag: string): string {
  return (
    STATEMENT_NAMES[tag] ??
    tag
      .replace(/Stmt$/, '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toUpperCase()
  );
}

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The last name of a qualified name list ([{String:{sval}}…]), as the parser spells it (quotes already removed). */
function lastName(list: unknown): string | null {
  if (!Array.isArray(list) || list.length === 0) return null;
  const last: unknown = list[list.length - 1];
  if (!isNode(last) || !isNode(last.String)) return null;
  const sval = last.String.sval;
  return typeof sval === 'string' ? sval : null;
}

function forbidden(name: string): Refusal {
  return refuse(
    'forbidden-function',
    `The function ${name}() is not allowed in a read-only query: it acts outside the query (waits, locks, files, ` +
      `network, settings, sequences or SQL from a string). Remove the call.`,
  );
}

/**
 * Every node of the tree, however deep: subqueries, CTEs, function arguments, LATERAL, set operations (whose arms
 * the tree holds untagged), VALUES lists, CASE, window clauses. A generic walk over every value cannot forget a
 * field the way a hand-picked list of fields would.
 */
function walk(value: unknown): Refusal | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = walk(item);
      if (found) return found;
    }
    return null;
  }
  if (!isNode(value)) return null;
  for (const [key, child] of Object.entries(value)) {
    const found = check(key, child) ?? walk(child);
    if (found) return found;
  }
  return null;
}

function check(key: string, child: unknown): Refusal | null {
  if (DML.has(key)) {
    return refuse(
      'data-modifying-cte',
      `A WITH clause holds ${statementName(key)}, which changes data. Use only SELECT inside WITH.`,
    );
  }
  if (key.endsWith('Stmt') && key !== 'SelectStmt') {
    return refuse('not-read-only', `${statementName(key)} is not allowed inside a query. Use only SELECT.`);
  }
  if (key === 'intoClause' && child) {
    return refuse(
      'select-into',
      'SELECT … INTO creates a table. Remove the INTO clause; the rows come back in the answer.',
    );
  }
  if (key === 'lockingClause' && Array.isArray(child) && child.length > 0) {
    return refuse(
      'locking-clause',
      'FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY SHARE takes row locks. Remove the locking clause.',
    );
  }
  if (key === 'FuncCall' && isNode(child)) {
    const name = lastName(child.funcname);
    const denied = name === null ? null : deniedFunction(POSTGRES_DENIED, name);
    if (denied) return forbidden(denied);
  }
  // `t.f` may also mean f(t) (attribute notation), but only for a function of one argument of t's row type: none of
  // the denied functions takes a row, so qualified column names are not matched (a column like `l.http_status` stays
  // allowed).
  return null;
}

function checkSelect(stmt: unknown, kind: 'select' | 'explain'): SafetyVerdict {
  return walk(stmt) ?? { ok: true, kind };
}

/** EXPLAIN plans without running; any ANALYZE option (even `ANALYZE false`) is refused so no spelling slips by. */
function checkExplain(explain: Node): SafetyVerdict {
  const options = Array.isArray(explain.options) ? explain.options : [];
  for (const option of options) {
    const name = isNode(option) && isNode(option.DefElem) ? option.DefElem.defname : null;
    if (typeof name === 'string' && /^analy[sz]e$/i.test(name)) {
      return refuse(
        'explain-analyze',
        'EXPLAIN ANALYZE executes the statement it explains. Use EXPLAIN without the ANALYZE option (in any form, ' +
          'even ANALYZE false) for the plan.',
      );
    }
  }
  const inner = explain.query;
  if (!isNode(inner) || !('SelectStmt' in inner)) {
    const tag = isNode(inner) ? (Object.keys(inner)[0] ?? 'statement') : 'statement';
    return refuse('not-read-only', `EXPLAIN of ${statementName(tag)} is not allowed. Explain a SELECT only.`);
  }
  return checkSelect(inner.SelectStmt, 'explain');
}

export async function checkPostgres(sql: string): Promise<SafetyVerdict> {
  if (sql.trim() === '') return refuse('empty', `The text holds no statement; ${sendInstead('postgres')}.`);
  let tree: ParseResult;
  try {
    tree = await parse(sql);
  } catch (error) {
    const detail = hasSqlDetails(error) ? error.sqlDetails?.message : (error as Error).message;
    const where =
      hasSqlDetails(error) && error.sqlDetails ? ` at character ${error.sqlDetails.cursorPosition + 1}` : '';
    return refuse(
      'parse-error',
      `PostgreSQL could not parse the statement (${detail ?? 'syntax error'}${where}); ${sendInstead('postgres')}.`,
    );
  }
  const stmts = tree.stmts ?? [];
  if (stmts.length === 0) return refuse('empty', `The text holds no statement; ${sendInstead('postgres')}.`);
  if (stmts.length > 1) {
    return refuse(
      'multiple-statements',
      `The text holds ${stmts.length} statements; ${sendInstead('postgres')} per request, without a second one after a semicolon.`,
    );
  }
  const stmt = stmts[0]?.stmt as unknown;
  if (isNode(stmt) && 'SelectStmt' in stmt) return checkSelect(stmt.SelectStmt, 'select');
  if (isNode(stmt) && isNode(stmt.ExplainStmt)) return checkExplain(stmt.ExplainStmt);
  const tag = isNode(stmt) ? (Object.keys(stmt)[0] ?? 'statement') : 'statement';
  return refuse('not-read-only', `${statementName(tag)} is not a read-only query; ${sendInstead('postgres')}.`);
}
