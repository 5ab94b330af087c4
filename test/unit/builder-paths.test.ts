import { execFileSync } from 'node:child_process';

import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

import { SaveFilesRequest } from '@api/features/builder/schemas';
import { PATH_DOCUMENT_PATTERN, PATH_PATTERN, pathProblem } from '@shared/builder/files';

const REFUSED: [string, string, RegExp][] = [
  ['.git at the root', '.git/config', /\.git segment/],
  ['.git in upper case', '.GIT/config', /\.git segment/],
  ['.git in mixed case', '.Git/HEAD', /\.git segment/],
  ['.git below the root', 'sub/.git/hooks/pre-commit', /\.git segment/],
  ['.git deep and in upper case', 'a/b/.GIT/config', /\.git segment/],
  ['.git as the file itself', 'vendor/.git', /\.git segment/],
  ['.git with a trailing dot (Windows drops it)', 'x/.git./config', /\.git segment/],
  ['.git with a trailing space (Windows drops it)', '.git /config', /\.git segment/],
  ['.git with an NTFS stream', '.git::$INDEX_ALLOCATION/config', /\.git segment/],
  ['the 8.3 short name of .git', 'GIT~1/config', /\.git segment/],
  ['right-to-left override', 'invoice\u202Etxt.exe', /U\+202E/],
  ['left-to-right override', 'a\u202Db', /U\+202D/],
  ['right-to-left isolate', 'src/\u2067evil.js', /U\+2067/],
  ['pop directional isolate', 'a\u2069.js', /U\+2069/],
  ['right-to-left mark', 'a\u200F.js', /U\+200F/],
  ['Arabic letter mark', 'a\u061C.js', /U\+061C/],
  ['zero-width space', 'index\u200B.html', /U\+200B/],
  ['zero-width joiner', 'a\u200Db', /U\+200D/],
  ['zero-width non-joiner inside .git', '.g\u200Cit/config', /U\+200C/],
  ['word joiner', 'a\u2060b', /U\+2060/],
  ['byte order mark', '\uFEFFindex.html', /U\+FEFF/],
  ['soft hyphen', 'pay\u00ADpal.js', /U\+00AD/],
  ['Hangul filler', 'a\u3164b', /U\+3164/],
  ['combining grapheme joiner', 'a\u034Fb', /U\+034F/],
  ['line separator', 'a\u2028b', /U\+2028/],
  ['C1 control (next line)', 'a\u0085b', /U\+0085/],
  ['tag character (beyond U+FFFF)', 'a\u{E0041}b', /U\+E0041/],
  ['musical format character (beyond U+FFFF)', 'a\u{1D173}b', /U\+1D173/],
  ['unpaired high surrogate', 'a\uD800b', /U\+D800, half of a surrogate pair/],
  ['unpaired low surrogate', 'a\uDC00', /U\+DC00/],
  ['NUL', 'a\u0000b', /U\+0000/],
  ['newline', 'a\nb', /U\+000A/],
  ['empty', '', /is empty/],
  ['absolute', '/etc/passwd', /absolute/],
  ['parent segment', 'a/../../x', /\. or \.\. segment/],
  ['dot segment', 'a/./b', /\. or \.\. segment/],
  ['empty segment', 'a//b', /empty segment/],
  ['trailing slash', 'a/', /empty segment/],
  ['backslash', 'a\\b', /backslash/],
  ['drive letter', 'C:x', /drive letter/],
];

const ALLOWED = [
  'index.html',
  'src/app.js',
  '.env.example',
  'a b/c.d',
  'ünïcode/ü.txt',
  '日本語/ファイル.txt',
  '..foo',
  'a/.gitignore',
  '.github/workflows/ci.yml',
  '.gitkeep',
  'repo.git/HEAD',
  'git/x',
  '.git.bak/x',
  'emoji-😀.txt',
  // A variation selector only picks the glyph of the visible character before it.
  'love-❤️.md',
  '𝒳/𝒴.txt',
];

describe('builder file paths', () => {
  it.each(REFUSED)('refuses %s', (_what, path, why) => {
    expect(pathProblem(path)).toMatch(why);
    expect(PATH_PATTERN.test(path)).toBe(false);
  });

  it.each(ALLOWED)('allows %s', (path) => {
    expect(pathProblem(path)).toBeUndefined();
    expect(PATH_PATTERN.test(path)).toBe(true);
  });

  it('refuses them in a save with the rule broken, and the character named', () => {
    const parsed = SaveFilesRequest.safeParse({
      files: [
        { path: 'sub/.GIT/hooks/pre-commit', content: '#!/bin/sh' },
        { path: 'a\u202Eb', delete: true },
      ],
    });
    expect(parsed.success).toBe(false);
    const messages = parsed.error!.issues.flatMap((i) =>
      i.code === 'invalid_union' ? i.errors.flat().map((e) => e.message) : [i.message],
    );
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^the path has a \.git segment/),
        expect.stringMatching(/^the path contains a control or invisible character \(U\+202E\)/),
      ]),
    );
    expect(SaveFilesRequest.safeParse({ files: [{ path: 'a/.gitignore', content: 'x' }] }).success).toBe(true);
  });

  it('states the rules in the OpenAPI document as a pattern the fuzzer (Python) compiles and reads the same', () => {
    // Over code points, as JSON Schema tools read it: PATH_PATTERN's surrogate ranges made the fuzzer's Rust
    // validator refuse it, and the fuzzer then generated paths with no rule at all.
    const registry = new OpenAPIRegistry();
    registry.registerPath({
      method: 'put',
      path: '/files',
      request: { body: { content: { 'application/json': { schema: SaveFilesRequest } } } },
      responses: { 200: { description: 'ok' } },
    });
    const doc = JSON.stringify(new OpenApiGeneratorV31(registry.definitions).generateDocument({} as never));
    const patterns = [...doc.matchAll(/"pattern":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);
    expect(patterns).toContain(PATH_DOCUMENT_PATTERN);
    expect(patterns.some((p) => /\\ud[89a-f]/i.test(p))).toBe(false);

    // Every sample but unpaired surrogates, which JSON cannot carry to Python.
    const samples = [...REFUSED.map(([, p]) => p), ...ALLOWED].filter((p) => !/\p{Cs}/u.test(p));
    const script =
      'import json, re, sys\n' +
      'p = re.compile(sys.argv[1])\n' +
      'print(json.dumps([bool(p.search(s)) for s in json.loads(sys.stdin.read())]))';
    const python = JSON.parse(
      execFileSync('python3', ['-c', script, PATH_DOCUMENT_PATTERN], { input: JSON.stringify(samples) }).toString(),
    ) as boolean[];
    expect(python).toEqual(samples.map((p) => PATH_PATTERN.test(p)));
  });
});
