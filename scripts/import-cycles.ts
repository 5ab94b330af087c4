import fs from 'node:fs';
import path from 'node:path';

import ts from 'typescript';

/**
 * Import cycles between our own files, found with the TypeScript compiler's own module resolution. Type-only imports
 * count: a type that two files borrow from each other still ties them into one unit a reader must hold at once, and
 * the refactor that turns it into a value import only needs one edit to break at load time.
 */

/** The folders whose files may not import in a circle (`npm run lint`). */
export const CHECKED_FOLDERS = ['api', 'shared', 'workflows', 'activities', 'worker', 'cli', 'scripts'];

const SOURCE = /\.(ts|tsx|mts|cts)$/;

/** Every TypeScript source file under `dirs` (declaration files and node_modules left out). */
export function sourceFiles(dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
    }
  };
  for (const dir of dirs) if (fs.existsSync(dir)) walk(dir);
  return out.sort();
}

/** file → the files of `files` it imports (static imports, re-exports, `import()` and `require` with a literal). */
export function importGraph(files: string[], options: ts.CompilerOptions): Map<string, string[]> {
  const inScope = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule?.resolvedFileName;
      if (resolved && inScope.has(path.resolve(resolved))) targets.add(path.resolve(resolved));
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Files tied into one circle: every file of `files` reaches every other; `circle` is one shortest way round. */
export interface ImportCycle {
  files: string[];
  circle: string[];
}

/**
 * The strongly connected components of more than one file (or a file importing itself), each with one concrete
 * circle of imports (`a → b → a`) so the reader sees which edge to cut. Tarjan's algorithm, iterative: the tree is
 * deeper than a comfortable recursion.
 */
export function findCycles(graph: Map<string, string[]>): ImportCycle[] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; next: number }[] = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const to = edges[frame.next++]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfLoop = (graph.get(frame.node) ?? []).includes(frame.node);
      if (component.length > 1 || selfLoop) components.push(component.sort());
    }
  }
  return components.map((files) => ({ files, circle: circleIn(graph, files) }));
}

/** One shortest circle through the component's first file, found breadth-first inside the component. */
function circleIn(graph: Map<string, string[]>, component: string[]): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const circle = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) circle.splice(1, 0, at);
        return [...circle, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

/** The compiler options of the tsconfig.json at `root`, so imports resolve as `tsc` resolves them. */
export function compilerOptionsAt(root: string): ts.CompilerOptions {
  const configPath = path.join(root, 'tsconfig.json');
  const { config } = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  return ts.parseJsonConfigFileContent(config, ts.sys, root).options;
}

/** The cycles of the repository at `root`, with paths relative to it. */
export function repositoryCycles(root: string, folders = CHECKED_FOLDERS): ImportCycle[] {
  const files = sourceFiles(folders.map((f) => path.resolve(root, f)));
  const relative = (list: string[]) => list.map((f) => path.relative(root, f));
  return findCycles(importGraph(files, compilerOptionsAt(root))).map((c) => ({
    files: relative(c.files),
    circle: relative(c.circle),
  }));
}

if (require.main === module) {
  const root = path.resolve(__dirname, '..');
  const cycles = repositoryCycles(root);
  for (const { files, circle } of cycles)
    console.error(`import cycle among ${files.length} file(s), for one: ${circle.join(' → ')}`);
  if (cycles.length > 0) {
    console.error(`${cycles.length} import cycle(s): cut one import of each (move the shared piece down a level).`);
    process.exit(1);
  }
}
