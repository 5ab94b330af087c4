import { Parser } from 'node-sql-parser';

import { deniedFunction, MYSQL_DENIED } from './functions';
import { lexMysql, type Token } from './mysql-lexer';
import { type Refusal, refuse, type SafetyVerdict, sendInstead } from './rules';

/**
 * MySQL/MariaDB: a lexical pass by the server's rules (mysql-lexer.ts), a few keyword sequences refused on the
 * tokens themselves (so a grammar the parser lacks cannot hide them), then node-sql-parser's tree walked whole.
 */

const parser = new Parser();

/** MySQL's grammar first (it knows LOCK IN SHARE MODE), then MariaDB's; a statement either reads is parsed. */
const GRAMMARS = ['MySQL', 'MariaDB'] as const;

/** Statement kinds that may never appear, at the top or nested. */
const STATEMENT_TYPES = new Set([
  'insert',
  'replace',
  'update',
  'delete',
  'create',
  'drop',
  'alter',
  'truncate',
  'rename',
  'set',
  'lock',
  'unlock',
  'call',
  'use',
  'grant',
  'revoke',
  'load_data',
  'show',
  'desc',
  'transaction',
  'explain',
]);

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function tokenRefusal(tokens: Token[]): Refusal | null {
  const at = (k: number): string => tokens[k]?.text ?? '';
  for (let k = 0; k < tokens.length; k += 1) {
    const pair = `${at(k)} ${at(k + 1)}`;
    if (pair === 'FOR UPDATE' || pair === 'FOR SHARE' || `${pair} ${at(k + 2)} ${at(k + 3)}` === 'LOCK IN SHARE MODE') {
      return refuse(
        'locking-clause',
        `${pair === 'LOCK IN' ? 'LOCK IN SHARE MODE' : pair} takes row locks. Remove the locking clause.`,
      );
    }
    if (pair === 'INTO OUTFILE' || pair === 'INTO DUMPFILE') {
      return refuse(
        'into-outfile',
        `${pair} writes a file on the database server. Remove it; the rows come back in the answer.`,
      );
    }
    if (pair === 'PROCEDURE ANALYSE') {
      return refuse(
        'not-read-only',
        `PROCEDURE ANALYSE runs a server procedure over the result; ${sendInstead('mysql')}.`,
      );
    }
    if (at(k) === ':' && at(k + 1) === '=' && tokens[k + 1]?.start === (tokens[k]?.start ?? 0) + 1) {
      return refuse(
        'user-variable',
        'The statement assigns a variable with :=. Compute the value in the query instead.',
      );
    }
  }
  return null;
}

function functionName(node: Node): string | null {
  if (typeof node.name === 'string') return node.name;
  if (isNode(node.name) && Array.isArray(node.name.name)) {
    const last: unknown = node.name.name[node.name.name.length - 1];
    if (isNode(last) && typeof last.value === 'string') return last.value;
  }
  return null;
}

/** Every object of the tree, however deep (subqueries sit under `ast`, set operations under `_next`, CTEs under `with`). */
function walk(value: unknown): Refusal | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = walk(item);
      if (found) return found;
    }
    return null;
  }
  if (!isNode(value)) return null;
  const found = checkNode(value);
  if (found) return found;
  for (const child of Object.values(value)) {
    const inner = walk(child);
    if (inner) return inner;
  }
  return null;
}

function checkNode(node: Node): Refusal | null {
  const type = node.type;
  if (typeof type === 'string' && STATEMENT_TYPES.has(type)) {
    return refuse('not-read-only', `${type.toUpperCase()} is not allowed inside a query. Use only SELECT.`);
  }
  if (type === 'assign') {
    return refuse('user-variable', 'The statement assigns a user variable. Compute the value in the query instead.');
  }
  if (type === 'function' || type === 'aggr_func') {
    const name = functionName(node);
    const denied = name === null ? null : deniedFunction(MYSQL_DENIED, name);
    if (denied) {
      return refuse(
        'forbidden-function',
        `The function ${denied.toUpperCase()}() is not allowed in a read-only query: it acts outside the query ` +
          `(waits, locks, files, replication, session state or commands). Remove the call.`,
      );
    }
  }
  if (isNode(node.into) && node.into.keyword) {
    const keyword = String(node.into.keyword).toUpperCase();
    if (keyword === 'OUTFILE' || keyword === 'DUMPFILE') {
      return refuse('into-outfile', `INTO ${keyword} writes a file on the database server. Remove it.`);
    }
    return refuse(
      'select-into',
      'SELECT … INTO assigns variables. Remove the INTO clause; the rows come back in the answer.',
    );
  }
  if (node.locking_read) {
    return refuse('locking-clause', `${String(node.locking_read).toUpperCase()} takes row locks. Remove it.`);
  }
  return null;
}

type Parsed = { ok: true; ast: unknown } | { ok: false; message: string };

function parseMysql(sql: string): Parsed {
  let message = '';
  for (const database of GRAMMARS) {
    try {
      return { ok: true, ast: parser.astify(sql, { database }) };
    } catch (error) {
      const location = (error as { location?: { start?: { line?: number; column?: number } } }).location?.start;
      message = location ? `near line ${location.line}, column ${location.column}` : 'somewhere in the text';
    }
  }
  return { ok: false, message };
}

/**
 * Words that begin MySQL/MariaDB statements other than queries: text starting with one is refused as what it is
 * even where the parser lacks its grammar (DO, HANDLER, KILL, …); any other unparsable text is a parse error.
 */
const OTHER_STATEMENTS = new Set(
  (
    'ALTER BACKUP BEGIN BINLOG CACHE CALL CHANGE CHECK CHECKSUM CLONE COMMIT CREATE DEALLOCATE DELETE DO DROP ' +
    'EXECUTE FLUSH GET GRANT HANDLER HELP IMPORT INSERT INSTALL KILL LOAD LOCK OPTIMIZE PREPARE PURGE RELEASE ' +
    'RENAME REPAIR REPLACE RESET RESIGNAL RESTART REVOKE ROLLBACK SAVEPOINT SET SHOW SHUTDOWN SIGNAL START STOP ' +
    'TRUNCATE UNINSTALL UNLOCK UPDATE USE XA'
  ).split(' '),
);

function checkSelectText(sql: string, kind: 'select' | 'explain', first: string): SafetyVerdict {
  const parsed = parseMysql(sql);
  if (!parsed.ok && OTHER_STATEMENTS.has(first)) {
    return refuse('not-read-only', `${first} statements are not allowed; ${sendInstead('mysql')}.`);
  }
  if (!parsed.ok) {
    return refuse('parse-error', `The statement could not be parsed (${parsed.message}); ${sendInstead('mysql')}.`);
  }
  const list = Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast];
  if (list.length !== 1) {
    return refuse(
      'multiple-statements',
      `The text holds ${list.length} statements; ${sendInstead('mysql')} per request.`,
    );
  }
  const stmt: unknown = list[0];
  if (!isNode(stmt)) return refuse('parse-error', `The statement could not be parsed; ${sendInstead('mysql')}.`);
  if (stmt.type === 'select') return walk(stmt) ?? { ok: true, kind };
  if (kind === 'select' && stmt.type === 'set' && walkAssignsUserVariable(stmt)) {
    return refuse('user-variable', 'SET @variable assigns a user variable. Compute the value in the query instead.');
  }
  return refuse('not-read-only', `${first} statements are not allowed; ${sendInstead('mysql')}.`);
}

function walkAssignsUserVariable(stmt: Node): boolean {
  const assignments = Array.isArray(stmt.expr) ? stmt.expr : [];
  return assignments.some((a) => isNode(a) && isNode(a.left) && a.left.type === 'var' && a.left.prefix === '@');
}

/**
 * EXPLAIN [EXTENDED | PARTITIONS | FORMAT = x] followed by a SELECT is checked as that SELECT. Everything else that
 * starts like it is refused: EXPLAIN ANALYZE and MariaDB's ANALYZE run the statement, EXPLAIN … FOR CONNECTION
 * reads another session, EXPLAIN … INTO @v assigns, EXPLAIN t and DESCRIBE/DESC describe tables (information_schema
 * answers that as a SELECT).
 */
function checkExplain(sql: string, tokens: Token[]): SafetyVerdict {
  const first = tokens[0]?.text;
  if (first === 'DESCRIBE' || first === 'DESC') {
    return refuse(
      'not-read-only',
      `${first} is not supported; use EXPLAIN SELECT … for a plan, or SELECT from information_schema.columns for a table's columns.`,
    );
  }
  if (first === 'ANALYZE') {
    if (['TABLE', 'TABLES', 'NO_WRITE_TO_BINLOG', 'LOCAL'].includes(tokens[1]?.text ?? '')) {
      return refuse('not-read-only', `ANALYZE TABLE updates the table's statistics; ${sendInstead('mysql')}.`);
    }
    return refuse('explain-analyze', 'ANALYZE executes the statement it analyses. Use EXPLAIN SELECT … for the plan.');
  }
  let k = 1;
  for (;;) {
    const word = tokens[k]?.text;
    if (word === 'EXTENDED' || word === 'PARTITIONS') k += 1;
    else if (word === 'FORMAT' && tokens[k + 1]?.text === '=') k += 3;
    else break;
  }
  const next = tokens[k];
  if (next?.text === 'ANALYZE') {
    return refuse(
      'explain-analyze',
      'EXPLAIN ANALYZE executes the statement it explains. Use EXPLAIN without ANALYZE.',
    );
  }
  if (next && (next.text === 'SELECT' || next.text === 'WITH' || next.text === '(')) {
    return checkSelectText(sql.slice(next.start), 'explain', next.text);
  }
  return refuse(
    'not-read-only',
    'EXPLAIN is allowed only of a SELECT (not of a table, another connection, or with INTO). Write EXPLAIN SELECT ….',
  );
}

export function checkMysql(sql: string): SafetyVerdict {
  const lexed = lexMysql(sql);
  if (!lexed.ok) return lexed;
  const { tokens } = lexed;
  if (tokens.length === 0) return refuse('empty', `The text holds no statement; ${sendInstead('mysql')}.`);
  const byToken = tokenRefusal(tokens);
  if (byToken) return byToken;
  if (['EXPLAIN', 'DESCRIBE', 'DESC', 'ANALYZE'].includes(tokens[0]?.text ?? '')) return checkExplain(sql, tokens);
  return checkSelectText(sql, 'select', tokens[0]?.text ?? '');
}
