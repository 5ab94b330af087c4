import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { ifAbsent, ignore, isAbsent } from '@shared/ignore';

const root = path.join(__dirname, '..', '..');

describe('expected failures', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-ignore-'));
    await fs.writeFile(path.join(dir, 'file'), 'x');
    await fs.mkdir(path.join(dir, 'folder'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('take nothing at the path, a file on the way, or a folder where a file was for absent', async () => {
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(isAbsent(await failure(fs.readFile(path.join(dir, 'nothing'))))).toBe(true); // ENOENT
    expect(isAbsent(await failure(fs.readFile(path.join(dir, 'file', 'below'))))).toBe(true); // ENOTDIR
    expect(isAbsent(await failure(fs.readFile(path.join(dir, 'folder'))))).toBe(true); // EISDIR
    expect(isAbsent(Object.assign(new Error('denied'), { code: 'EACCES' }))).toBe(false);
    expect(isAbsent(new Error('no code'))).toBe(false);
    expect(isAbsent(undefined)).toBe(false);
    expect(isAbsent(null)).toBe(false);
  });

  it('read an absent path as the fallback, and throw any other failure', async () => {
    expect(await fs.readFile(path.join(dir, 'nothing'), 'utf8').catch(ifAbsent(''))).toBe('');
    expect(await fs.readdir(path.join(dir, 'file')).catch(ifAbsent([]))).toEqual([]);
    expect(await fs.readFile(path.join(dir, 'file'), 'utf8').catch(ifAbsent(''))).toBe('x');
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    await expect(Promise.reject(denied).catch(ifAbsent(''))).rejects.toBe(denied);
    const bug = new TypeError('not a path');
    await expect(Promise.reject(bug).catch(ifAbsent(undefined))).rejects.toBe(bug);
  });

  it('resolve an ignored failure to undefined, or to the fallback given', async () => {
    expect(await Promise.reject(new Error('x')).catch(ignore('covered elsewhere'))).toBeUndefined();
    expect(await Promise.reject(new Error('x')).catch(ignore('covered elsewhere', false))).toBe(false);
    expect(await Promise.resolve(true).catch(ignore('covered elsewhere', false))).toBe(true);
  });
});

describe('lint', () => {
  // One run of the project's own configuration over lines that drop an error unseen and lines that say why.
  it('refuses a rejection handler that drops its error unseen, and takes one that says why', async () => {
    const lines = [
      "import fs from 'node:fs/promises';",
      '',
      "import { ifAbsent, ignore } from './ignore';",
      "export const a = () => fs.readFile('f').catch(() => undefined);", // 4: refused
      "export const b = () => fs.readFile('f').catch((_err) => '');", // 5: refused
      "export const c = () => fs.stat('f').then(() => true, () => false);", // 6: refused
      "export const d = () => fs.stat('f').then(() => true, function () { return false; });", // 7: refused
      "export const e = () => fs.readFile('f').catch(ifAbsent(''));",
      "export const f = () => fs.readFile('f').catch(ignore('a suggestion only'));",
      "export const g = () => fs.stat('f').then(() => true, ifAbsent(false));",
      'export const h = () =>',
      "  fs.readFile('f').catch((err: unknown) => {",
      '    throw new Error(`reading f: ${String(err)}`);',
      '  });',
      '',
    ];
    const run = promisify(execFile)(
      process.execPath,
      [
        path.join(root, 'node_modules/eslint/bin/eslint.js'),
        '--stdin',
        '--stdin-filename',
        'shared/ignore.ts',
        '--format',
        'json',
      ],
      { cwd: root },
    );
    run.child.stdin!.end(lines.join('\n'));
    const { stdout } = await run.catch((err: { stdout: string }) => err); // exit 1: the refusals
    const [result] = JSON.parse(stdout) as { messages: { line: number; ruleId: string | null }[] }[];
    expect(result!.messages.map((m) => [m.line, m.ruleId])).toEqual(
      [4, 5, 6, 7].map((line) => [line, 'no-restricted-syntax']),
    );
  });
});
