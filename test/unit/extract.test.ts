import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ExtractError, extractZip, soleTopLevelDir } from '@shared/build/extract';

import { makeZip, rawZip } from '../helpers/zip';

const LIMITS = { maxEntries: 50, maxUncompressedBytes: 1024 * 1024 };

describe('extractZip', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-extract-'));
  });
  afterEach(() => fs.rm(tmp, { recursive: true, force: true }));

  async function extract(zip: Buffer, limits = LIMITS) {
    const file = path.join(tmp, 'a.zip');
    await fs.writeFile(file, zip);
    return extractZip(file, path.join(tmp, 'out'), limits);
  }

  /** Refused with a reason matching `why`, and nothing extracted is left. */
  async function refused(zip: Buffer, why: RegExp, limits = LIMITS) {
    await expect(extract(zip, limits)).rejects.toThrow(ExtractError);
    await expect(extract(zip, limits)).rejects.toThrow(why);
    await expect(fs.access(path.join(tmp, 'out'))).rejects.toThrow();
  }

  it('extracts files, folders and links that stay inside the tree', async () => {
    const zip = rawZip([
      { name: 'site/index.html', data: '<h1>hi</h1>' },
      { name: 'site/css/app.css', data: 'body{}' },
      { name: 'site/home.html', data: 'index.html', symlink: true },
    ]);
    expect(await extract(zip)).toEqual({ entries: 3, bytes: 17 });
    const out = path.join(tmp, 'out');
    expect(await fs.readFile(path.join(out, 'site/css/app.css'), 'utf8')).toBe('body{}');
    expect(await fs.readlink(path.join(out, 'site/home.html'))).toBe('index.html');
    expect(await soleTopLevelDir(out)).toBe(path.join(out, 'site'));
  });

  it('refuses zip-slip names, absolute paths and backslashes, writing nothing where they point', async () => {
    // Extraction goes to <tmp>/out: each of these would land in <tmp> itself, next to the archive.
    await refused(
      rawZip([
        { name: 'ok.txt', data: 'x' },
        { name: 'a/../../evil.txt', data: 'x' },
      ]),
      /zip-slip/,
    );
    await expect(fs.access(path.join(tmp, 'evil.txt'))).rejects.toThrow();
    await refused(rawZip([{ name: '/etc/evil', data: 'x' }]), /absolute path/);
    await refused(rawZip([{ name: 'C:/evil', data: 'x' }]), /absolute path/);
    // Backslashes are read as separators, as Windows zip tools mean them: still zip-slip.
    await refused(rawZip([{ name: '..\\evil-backslash', data: 'x' }]), /zip-slip/);
    await expect(fs.access(path.join(tmp, 'evil-backslash'))).rejects.toThrow();
    expect((await fs.readdir(tmp)).sort()).toEqual(['a.zip']);
  });

  it('refuses symlinks that lead out of the tree, relative or absolute', async () => {
    await refused(rawZip([{ name: 'link', data: '../../etc/passwd', symlink: true }]), /symlink.*outside/);
    await refused(rawZip([{ name: 'a/link', data: '/etc/passwd', symlink: true }]), /symlink.*outside/);
  });

  it('refuses a link and a file at the same path rather than write through the link', async () => {
    await refused(
      rawZip([
        { name: 'dir', data: '.', symlink: true },
        { name: 'dir/file.txt', data: 'x' },
      ]),
      /cannot be created/,
    );
  });

  it('refuses more entries than allowed', async () => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}.txt`, 'x']));
    await refused(await makeZip(many), /60 entries, more than the 50 allowed/);
  });

  it('refuses a zip bomb by its declared size, and one whose headers lie by what actually inflates', async () => {
    await refused(await makeZip({ 'zeros.bin': '\0'.repeat(4 * 1024 * 1024) }), /zip bomb/);
    // Declares 10 bytes for 2 MB: yauzl's size validation or our counter stops it, either way refused.
    const honest = rawZip([{ name: 'big.bin', data: 'y'.repeat(2 * 1024 * 1024) }]);
    const lying = Buffer.from(honest);
    const cd = lying.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    lying.writeUInt32LE(10, 22); // local header, uncompressed size
    lying.writeUInt32LE(10, cd + 24); // central directory, uncompressed size
    await expect(extract(lying)).rejects.toThrow(ExtractError);
    await expect(fs.access(path.join(tmp, 'out'))).rejects.toThrow();
  });

  it('refuses a corrupt archive', async () => {
    const truncated = (await makeZip({ 'a.txt': 'x'.repeat(1000) })).subarray(0, 80);
    await refused(truncated, /not a readable zip/);
  });
});
