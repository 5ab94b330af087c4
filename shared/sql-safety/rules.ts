/** The two families of external database a source speaks; 'mysql' covers MySQL and MariaDB. */
export type SqlDialect = 'postgres' | 'mysql';

/**
 * Why a statement was refused. Stable kebab-case identifiers: users and agents see them, and tests and docs key on
 * them, so a rule is renamed never and added rarely.
 */
export const SAFETY_RULES = {
  'parse-error': 'The statement could not be parsed in the source’s dialect.',
  empty: 'The text holds no statement (only whitespace, comments or semicolons).',
  'multiple-statements': 'More than one statement was sent; one statement runs per request.',
  'not-read-only':
    'The statement is not a SELECT, WITH … SELECT or EXPLAIN of one (DML, DDL, COPY, SET, transaction control, …).',
  'data-modifying-cte': 'A WITH clause holds INSERT, UPDATE, DELETE or MERGE.',
  'select-into': 'SELECT … INTO creates a table (PostgreSQL) or assigns variables (MySQL/MariaDB).',
  'locking-clause': 'FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE takes row locks.',
  'explain-analyze': 'EXPLAIN ANALYZE (and MariaDB’s ANALYZE statement) executes the statement it explains.',
  'forbidden-function':
    'A function with effects outside the query: waits, locks, files, network, processes, settings, sequences, or SQL run from a string.',
  'executable-comment':
    'A MySQL/MariaDB comment the server executes: /*! … */, /*M! … */ or an optimizer hint /*+ … */.',
  'user-variable': 'A MySQL/MariaDB user variable is assigned (@a := …, SET @a = …).',
  'into-outfile': 'SELECT … INTO OUTFILE / DUMPFILE writes a file on the database server.',
  'ambiguous-syntax':
    'Text the server may read differently from this check: a backslash-escaped quote, or -- not followed by a space.',
} as const satisfies Record<string, string>;

export type SafetyRule = keyof typeof SAFETY_RULES;

export type SafetyVerdict = { ok: true; kind: 'select' | 'explain' } | { ok: false; rule: SafetyRule; message: string };

export type Refusal = Extract<SafetyVerdict, { ok: false }>;

export function refuse(rule: SafetyRule, message: string): Refusal {
  return { ok: false, rule, message };
}

/** The advice every "send something else" message ends with, per dialect. */
export function sendInstead(dialect: SqlDialect): string {
  const name = dialect === 'postgres' ? 'PostgreSQL' : 'MySQL/MariaDB';
  return `send one SELECT, WITH … SELECT or EXPLAIN statement in ${name} syntax`;
}
