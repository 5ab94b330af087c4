import { type Refusal, refuse, sendInstead } from './rules';

/**
 * A lexical pass over MySQL/MariaDB text, by the server's own rules, BEFORE any parsing.
 *
 * It exists because the parser we use (node-sql-parser) drops comments and reads some text differently from the
 * server; whatever the server would execute but the parser would not see must be refused here:
 * - comments opening with `/*!` or `/*M!` are executed by MySQL/MariaDB (a parser that drops comments never sees
 *   them), and `/*+` optimizer hints can set session variables for the statement (SET_VAR) or lift its time limit
 *   (MAX_EXECUTION_TIME);
 * - `--` starts a comment only when a space or control character follows: `5--1` is arithmetic to the server but a
 *   comment to the parser, so text after it would run unseen;
 * - a backslash before a string's own quote (`'it\'s'`) ends the string early when the server runs with
 *   NO_BACKSLASH_ESCAPES (or ANSI_QUOTES for "…"), which would turn the string's rest into code the parser took for
 *   data; the doubled quote (`'it''s'`) means the same under every mode.
 * Text inside string literals and quoted identifiers is data, never inspected for any of these.
 */

export interface Token {
  /** Upper-cased word, or the punctuation character. */
  text: string;
  start: number;
}

export type LexResult = { ok: true; tokens: Token[] } | Refusal;

const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;

function unterminated(what: string): Refusal {
  return refuse('parse-error', `The statement has an unterminated ${what}; ${sendInstead('mysql')}.`);
}

export function lexMysql(sql: string): LexResult {
  const tokens: Token[] = [];
  let afterSemicolon = false;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c <= ' ') {
      i += 1;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) return unterminated('string literal');
        if (sql[j] === '\\') {
          if (sql[j + 1] === c) {
            return refuse(
              'ambiguous-syntax',
              `The string literal starting at character ${i + 1} escapes its quote with a backslash (\\${c}), which ` +
                `the server reads differently under some SQL modes. Write the quote doubled (${c}${c}) instead.`,
            );
          }
          j += 2;
        } else if (sql[j] === c) {
          if (sql[j + 1] !== c) break;
          j += 2;
        } else {
          j += 1;
        }
      }
      if (afterSemicolon) return several();
      tokens.push({ text: 'STRING', start: i });
      i = j + 1;
    } else if (c === '`') {
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) return unterminated('quoted identifier');
        if (sql[j] === '`') {
          if (sql[j + 1] !== '`') break;
          j += 2;
        } else {
          j += 1;
        }
      }
      if (afterSemicolon) return several();
      tokens.push({ text: 'IDENTIFIER', start: i });
      i = j + 1;
    } else if (c === '/' && next === '*') {
      const marker = sql.slice(i + 2, i + 4);
      if (marker.startsWith('!') || marker.startsWith('+') || /^m!/i.test(marker)) {
        return refuse(
          'executable-comment',
          `The comment at character ${i + 1} (${sql.slice(i, i + 4)}…) is executed by MySQL/MariaDB (a version ` +
            `comment or optimizer hint). Write its content as plain SQL or remove it.`,
        );
      }
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return unterminated('comment (/* without */)');
      i = end + 2;
    } else if (c === '#') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '-' && next === '-') {
      const after = sql[i + 2];
      if (after !== undefined && after > ' ') {
        return refuse(
          'ambiguous-syntax',
          `"--" at character ${i + 1} is not followed by a space: the server reads it as two minus signs, not a ` +
            `comment. Write "- -" for arithmetic or "-- " for a comment.`,
        );
      }
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === ';') {
      afterSemicolon = tokens.length > 0;
      i += 1;
    } else {
      if (afterSemicolon) return several();
      let j = i + 1;
      if (WORD.test(c)) while (j < sql.length && WORD.test(sql[j] as string)) j += 1;
      tokens.push({ text: sql.slice(i, j).toUpperCase(), start: i });
      i = j;
    }
  }
  return { ok: true, tokens };
}

function several(): Refusal {
  return refuse(
    'multiple-statements',
    `The text holds more than one statement; ${sendInstead('mysql')} per request, without a second one after a semicolon.`,
  );
}
