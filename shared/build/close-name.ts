/**
 * Edits between two names (insert, delete, substitute, or swap two neighbours: the optimal string alignment
 * distance), stopping early once it exceeds `max`: names are short and only a typo or two is of interest.
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    before = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** Typos tolerated by a name's length: none under 4 characters (too many real names are that close), then 1, then 2. */
const tolerance = (name: string) => (name.length < 4 ? 0 : name.length < 8 ? 1 : 2);

/**
 * The candidate `name` is most likely a misspelling of, or undefined: the closest within the name's tolerance,
 * the earlier candidate on a tie. `name` itself never counts.
 */
export function closeName(name: string, candidates: readonly string[]): string | undefined {
  const max = tolerance(name);
  if (max === 0) return undefined;
  let best: { name: string; d: number } | undefined;
  for (const c of candidates) {
    if (c === name) continue;
    const d = editDistance(name.toLowerCase(), c.toLowerCase(), max);
    if (d <= max && (!best || d < best.d)) best = { name: c, d };
  }
  return best?.name;
}
