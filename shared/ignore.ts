/**
 * Rejection handlers that say which failure they expect, for `.catch(…)` and `.then(…, …)`. Lint refuses a handler
 * there that drops its error unseen (eslint.config.mjs): it either matches its expected case and throws the rest
 * (`ifAbsent`), or names what makes any failure harmless (`ignore`), or does something with the error.
 */

/** Codes for "nothing of that kind at the path": nothing at all, a file on the way to it, a folder where a file was. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

/** Whether `err` says the path holds nothing of the kind asked for (no such file or folder). */
export function isAbsent(err: unknown): boolean {
  return ABSENT.has((err as NodeJS.ErrnoException | null)?.code ?? '');
}

/**
 * `.catch(ifAbsent(fallback))`: a path with nothing there reads as `fallback`; any other failure (no permission, a
 * disk error) is thrown, so it is seen instead of being taken for an absent file.
 */
export const ifAbsent =
  <T>(fallback: T) =>
  (err: unknown): T => {
    if (isAbsent(err)) return fallback;
    throw err;
  };

/**
 * `.catch(ignore('why'))`: for a step whose failure something else already covers (a TTL frees the key, watchers
 * recheck on their own, the caller holds the same promise and sees its error). `why` names that cover, where the next
 * reader looks for it; the failure resolves to `fallback` (undefined unless given).
 */
export function ignore(why: string): (err: unknown) => undefined;
export function ignore<T>(why: string, fallback: T): (err: unknown) => T;
export function ignore<T>(_why: string, fallback?: T) {
  return () => fallback;
}
