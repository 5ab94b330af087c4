import fs from 'node:fs';
import path from 'node:path';

import { compilerOptionsAt, findCycles, importGraph, repositoryCycles, sourceFiles } from '@scripts/import-cycles';

const root = path.resolve(__dirname, '../..');
const rel = (file: string) => path.relative(root, file);
const graph = () =>
  importGraph(sourceFiles([path.join(root, 'api'), path.join(root, 'shared')]), compilerOptionsAt(root));

describe('import cycles', () => {
  it('finds a circle of imports and names the way round, and none in a tree', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(findCycles(g)).toEqual([
      { files: ['a', 'b', 'c'], circle: ['a', 'b', 'c', 'a'] },
      { files: ['e'], circle: ['e', 'e'] },
    ]);
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('finds none in the api, shared code, the CLI, the worker and the scripts', () => {
    expect(repositoryCycles(root, ['api', 'shared', 'cli', 'worker', 'scripts'])).toEqual([]);
  });
});

describe('a feature is its folder', () => {
  it('is imported from outside its folder only by the feature list (and by features that build on it)', () => {
    const outsiders: string[] = [];
    for (const [from, targets] of graph()) {
      for (const to of targets) {
        const feature = /^api\/features\/([^/]+)\//.exec(rel(to))?.[1];
        if (!feature) continue;
        const fromFeature = /^api\/features\/([^/]+)\//.exec(rel(from))?.[1];
        if (fromFeature || rel(from) === 'api/features/index.ts') continue;
        outsiders.push(`${rel(from)} → ${rel(to)}`);
      }
    }
    expect(outsiders).toEqual([]);
  });

  it('leaves the frame (app, origins, OpenAPI, MCP) free of the feature list: it receives the composed routes', () => {
    const frame = [...graph()].filter(
      ([from]) => !rel(from).startsWith('api/features/') && rel(from) !== 'api/compose.ts',
    );
    const onList = frame.filter(([, targets]) => targets.some((t) => rel(t) === 'api/features/index.ts'));
    expect(onList.map(([from]) => rel(from))).toEqual([]);
  });
});

describe('helpers built once', () => {
  /** The product files of `dirs` that call `factory(`. */
  const callers = (factory: string, dirs: string[]) =>
    sourceFiles(dirs.map((d) => path.join(root, d)))
      .filter((f) => fs.readFileSync(f, 'utf8').includes(`${factory}(`))
      .map(rel);

  it.each(['createGitSourceCheck', 'createEnvSealer', 'createAuthz'])(
    '%s is called in one place of the api, the core, and handed to what needs it',
    (factory) => {
      expect(callers(factory, ['api'])).toEqual(['api/core.ts']);
    },
  );

  it('builds the env sealer once in the worker too', () => {
    const calls = sourceFiles(['activities', 'worker'].map((d) => path.join(root, d))).reduce(
      (n, f) => n + fs.readFileSync(f, 'utf8').split('createEnvSealer(').length - 1,
      0,
    );
    expect(calls).toBe(1);
  });
});
