import { z } from 'zod';

/**
 * Regular expressions that a request schema checks and the OpenAPI document states as `pattern`, so both say the
 * same: written for JavaScript and for the JSON Schema tools that read them (Python's `re`), hence no flags, no
 * `\w` or `\s` (whose meaning differs), no `.` outside a class. Unanchored groups, to be combined.
 */

const inner = (r: RegExp) => r.source.replace(/^\^/, '').replace(/\$$/, '');

/** One DNS label as RFC 1123 spells it, letters in either case. */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** A DNS name (no trailing dot, no wildcard). */
export const DNS_NAME = `(?:${LABEL}(?:\\.${LABEL})*)`;
export const IPV4 = `(?:${inner(z.regexes.ipv4)})`;
/** Written out in full or compressed with ::, without a zone or an IPv4 tail. */
export const IPV6 = `(?:${inner(z.regexes.ipv6)})`;

/**
 * A character that String.prototype.trim keeps: not one of ECMAScript's white space or line terminators, spelled out
 * since `\s` means another set elsewhere (Python's has U+001C–U+001F and U+0085, not U+FEFF).
 */
export const VISIBLE = '[^\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';

/** Alternatives (for a regular expression) matching the decimals from `lo` to `hi` of one length, no sign. */
function sameLength(lo: string, hi: string): string[] {
  if (lo === hi) return [lo];
  const [a, b] = [lo[0]!, hi[0]!];
  const [restLo, restHi] = [lo.slice(1), hi.slice(1)];
  if (a === b) return sameLength(restLo, restHi).map((s) => a + s);
  const n = restLo.length;
  const anyRest = n === 0 ? '' : n === 1 ? '[0-9]' : `[0-9]{${n}}`;
  const fromZero = /^0*$/.test(restLo);
  const toNine = /^9*$/.test(restHi);
  const first = fromZero ? Number(a) : Number(a) + 1;
  const last = toNine ? Number(b) : Number(b) - 1;
  return [
    ...(fromZero ? [] : sameLength(restLo, '9'.repeat(n)).map((s) => a + s)),
    ...(first <= last ? [`${first === last ? first : `[${first}-${last}]`}${anyRest}`] : []),
    ...(toNine ? [] : sameLength('0'.repeat(n), restHi).map((s) => b + s)),
  ];
}

/**
 * A regular expression group (unanchored) matching exactly the integers from `lo` to `hi` written in decimal
 * without sign or leading zero, so a range a zod refinement checks after parsing can be a document's `pattern`.
 */
export function integerRangePattern(lo: number, hi: number): string {
  if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || lo < 0 || lo > hi)
    throw new Error(`no integer range ${lo}..${hi}`);
  const parts: string[] = [];
  for (let digits = String(lo).length; digits <= String(hi).length; digits++) {
    const from = Math.max(lo, digits === 1 ? 0 : 10 ** (digits - 1));
    const to = Math.min(hi, 10 ** digits - 1);
    parts.push(...sameLength(String(from), String(to)));
  }
  return `(?:${parts.join('|')})`;
}
