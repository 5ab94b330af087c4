import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { ALIASED_FOLDERS } from '@shared/aliases';

const root = path.resolve(__dirname, '..', '..');
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');

describe('import aliases of our top-level folders', () => {
  it('are one list for tsc and tsx (tsconfig.json), jest, lint and the workflow bundler', () => {
    const { compilerOptions } = JSON.parse(read('tsconfig.json')) as {
      compilerOptions: { paths: Record<string, string[]> };
    };
    expect(Object.keys(compilerOptions.paths).sort()).toEqual(ALIASED_FOLDERS.map((f) => `@${f}/*`).sort());
    for (const f of ALIASED_FOLDERS) {
      expect(compilerOptions.paths[`@${f}/*`]).toEqual([`./${f}/*`]);
      expect(fs.statSync(path.join(root, f)).isDirectory()).toBe(true);
    }
    // Lint sorts them as their own group, after packages.
    expect(read('eslint.config.mjs')).toContain(`['^@(${[...ALIASED_FOLDERS].sort().join('|')})/']`);
  });

  it('are how a file imports from another top-level folder: no ../ chain crosses one', () => {
    const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: root, encoding: 'utf8' }).split('\n');
    const crossing: string[] = [];
    for (const file of files.filter(Boolean)) {
      if (!fs.existsSync(path.join(root, file))) continue;
      const top = file.split('/')[0];
      for (const m of read(file).matchAll(/(?:from|import\(|require\()\s*'((?:\.\.\/)+[^']+)'/g)) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!));
        const [targetTop, ...rest] = target.split('/');
        if (targetTop !== top && rest.length > 0 && (ALIASED_FOLDERS as readonly string[]).includes(targetTop!))
          crossing.push(`${file}: '${m[1]}' (write '@${target}')`);
      }
    }
    expect(crossing).toEqual([]);
  });
});
