import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { extractZip } from '@shared/build/extract';
import {
  checkProjectFiles,
  decodeFiles,
  fileLimits,
  INLINE_FILE_LIMITS,
  type ProjectFile,
  zipProjectFiles,
} from '@shared/uploads/files';

const BUILD = { BUILD_MAX_ENTRIES: 20_000, BUILD_MAX_UNCOMPRESSED_BYTES: 1 << 30, UPLOAD_MAX_BYTES: 100 << 20 };
const file = (p: string, content = 'x'): ProjectFile => ({ path: p, bytes: Buffer.from(content) });
const check =
  (files: ProjectFile[], inline = true, cfg = BUILD) =>
  () =>
    checkProjectFiles(files, fileLimits(cfg, inline));

describe('a project given as files', () => {
  it('zips to an archive the build extracts to exactly those files', async () => {
    const files = [file('index.html', '<h1>v1</h1>'), file('css/app.css', 'body{}'), file('a/b/c/deep.txt', 'deep')];
    check(files)();
    const zip = await zipProjectFiles(files);
    // The same files make the same archive: its digest names the content.
    expect((await zipProjectFiles(files)).equals(zip)).toBe(true);
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-files-'));
    try {
      await fs.writeFile(path.join(tmp, 'a.zip'), zip);
      const out = path.join(tmp, 'out');
      expect(await extractZip(path.join(tmp, 'a.zip'), out, { maxEntries: 10, maxUncompressedBytes: 1000 })).toEqual({
        entries: 3,
        bytes: 21,
      });
      for (const f of files) expect(await fs.readFile(path.join(out, f.path), 'utf8')).toBe(f.bytes.toString());
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });

  it.each([
    ['../evil.js', /"\.\.\/evil\.js" has a \.\. segment, pointing outside the tree \(zip-slip\)/],
    ['src/../../evil.js', /zip-slip/],
    ['/etc/passwd', /"\/etc\/passwd" is an absolute path/],
    ['C:/win.ini', /is an absolute path/],
    ['a\\b.js', /uses backslashes/],
    ['a\0b', /NUL/],
    ['dir/', /ends with \//],
    ['a//b.js', /empty or \. segment/],
    ['./a.js', /empty or \. segment/],
  ])('refuses the path %j, naming it and the rule', (p, why) => {
    expect(check([file('ok.txt'), file(p)])).toThrow(why);
  });

  it('refuses a path given twice, and a file that another needs as a directory', () => {
    expect(check([file('a.txt'), file('a.txt')])).toThrow(/"a\.txt" is given twice/);
    expect(check([file('lib'), file('lib/x.js')])).toThrow(/"lib" is a file, so "lib\/x\.js" cannot be inside it/);
  });

  it('holds inline files to the inline caps and the build caps, naming the file and the cap', () => {
    const many = Array.from({ length: INLINE_FILE_LIMITS.maxFiles + 1 }, (_, i) => file(`f${i}.txt`));
    expect(check(many)).toThrow(`501 files are more than the 500 an inline deploy takes`);
    // Not inline (a builder checkpoint): the build's own cap is the one that holds.
    expect(check(many, false)).not.toThrow();
    expect(check(many, false, { ...BUILD, BUILD_MAX_ENTRIES: 100 })).toThrow(
      '501 files are more than the 100 a build extracts (BUILD_MAX_ENTRIES)',
    );
    const big = [file('small.txt'), { path: 'big.bin', bytes: Buffer.alloc(INLINE_FILE_LIMITS.maxBytes) }];
    expect(check(big)).toThrow(/With "big\.bin" \(524288 bytes\) the files hold more than the 524288 bytes an inline/);
    expect(check(big, true, { ...BUILD, BUILD_MAX_UNCOMPRESSED_BYTES: 1000 })).toThrow(
      /more than the 1000 bytes a build extracts \(BUILD_MAX_UNCOMPRESSED_BYTES\)/,
    );
  });

  it('decodes text and base64, and refuses content that is not base64, naming the path', () => {
    const [text, bytes] = decodeFiles([
      { path: 'a.txt', content: 'héllo', encoding: 'utf8' },
      { path: 'b.bin', content: Buffer.from([0, 255, 1]).toString('base64'), encoding: 'base64' },
    ]);
    expect(text!.bytes.toString('utf8')).toBe('héllo');
    expect([...bytes!.bytes]).toEqual([0, 255, 1]);
    expect(() => decodeFiles([{ path: 'img.png', content: 'not base64!', encoding: 'base64' }])).toThrow(
      /The content of "img\.png" is not base64/,
    );
  });
});
