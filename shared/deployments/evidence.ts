import type { FailureCause } from './hints';

/**
 * The evidence a failed container leaves in its log, made fit to show: a crash-looping app prints the same lines on
 * every start, so its tail is one run's lines many times over; and some of those lines name the cause outright.
 */

/** The longest block looked for when collapsing repeats: a crash's output with its stack trace fits. */
const MAX_BLOCK = 60;

/**
 * `lines` with every run of a repeated block (the same lines, back to back) kept once, so a crash that repeated
 * on each restart shows once. At each position the block covering the most lines wins, so the repeated lines
 * inside one run's output (`retrying…` twice, then the error) are kept as they are.
 */
export function collapseRepeats(lines: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    let best = { size: 1, copies: 1 };
    for (let size = 1; size <= MAX_BLOCK && i + 2 * size <= lines.length; size++) {
      let copies = 1;
      while (i + (copies + 1) * size <= lines.length && sameBlock(lines, i, i + copies * size, size)) copies++;
      if (copies > 1 && size * copies > best.size * best.copies) best = { size, copies };
    }
    out.push(...lines.slice(i, i + best.size));
    i += best.size * best.copies;
  }
  return out;
}

function sameBlock(lines: readonly string[], a: number, b: number, size: number): boolean {
  for (let k = 0; k < size; k++) if (lines[a + k] !== lines[b + k]) return false;
  return true;
}

/** Node's words for a module it could not load (CommonJS `require`, then ES `import` of a package). */
const NODE_MISSING = /(?:Cannot find module|Cannot find package) '([^']+)'/;
/** Python's. */
const PYTHON_MISSING = /ModuleNotFoundError: No module named '([^']+)'/;

/** The package a bare specifier loads: `express/lib/router` is `express`, `@scope/pkg/x` is `@scope/pkg`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/**
 * A cause the last lines name outright (a module the app could not load), or undefined. The last such line wins:
 * it is the one that ended the run.
 */
export function causeInLines(lines: readonly string[]): FailureCause | undefined {
  for (let k = lines.length - 1; k >= 0; k--) {
    const node = NODE_MISSING.exec(lines[k]!);
    if (node) {
      const specifier = node[1]!;
      // A path is a file of the app's own (often the start command's), not a dependency.
      if (/^(?:\/|\.{1,2}\/|\.{1,2}$|[A-Za-z]:\\)/.test(specifier)) return { cause: 'missing_file', file: specifier };
      if (specifier.startsWith('node:')) return undefined;
      return { cause: 'missing_module', language: 'node', module: packageOf(specifier) };
    }
    const python = PYTHON_MISSING.exec(lines[k]!);
    if (python) return { cause: 'missing_module', language: 'python', module: python[1]!.split('.')[0]! };
  }
  return undefined;
}
