import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import yauzl from 'yauzl';

/** An archive refused for what it contains; the message names the entry and the rule. */
export class ExtractError extends Error {
  override name = 'ExtractError';
}

export interface ExtractLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

const openZip = (file: string) =>
  new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: true },
      (err, zip) =>
        err || !zip
          ? reject(new ExtractError(`the archive is not a readable zip file: ${err?.message}`))
          : resolve(zip),
    ),
  );

const streamOf = (zip: yauzl.ZipFile, entry: yauzl.Entry) =>
  new Promise<NodeJS.ReadableStream>((resolve, reject) =>
    zip.openReadStream(entry, (err, stream) => (err || !stream ? reject(err) : resolve(stream))),
  );

/** yauzl's own name checks (it validates names as it decodes them), in our words. */
function explain(err: Error): ExtractError {
  const [, kind, name] =
    /^(invalid relative path|absolute path|invalid characters in fileName): (.*)$/.exec(err.message) ?? [];
  if (kind === 'invalid relative path') {
    return new ExtractError(
      `the archive entry ${JSON.stringify(name)} points outside the archive (zip-slip); refusing to extract`,
    );
  }
  if (kind === 'absolute path') {
    return new ExtractError(`the archive entry ${JSON.stringify(name)} is an absolute path; refusing to extract`);
  }
  if (kind) return new ExtractError(`the archive entry ${JSON.stringify(name)} uses backslashes; refusing to extract`);
  return new ExtractError(`the archive is not a readable zip file: ${err.message}`);
}

/**
 * Why a file name may not go into a source tree, or undefined: the rules an uploaded archive's entries are held to,
 * and so every other way a source's files arrive (inline files, a builder checkpoint) before they are zipped.
 */
export function entryNameProblem(name: string): string | undefined {
  if (name.includes('\0')) return 'has a NUL in its name';
  if (name.includes('\\')) return 'uses backslashes (separate directories with /)';
  if (path.posix.isAbsolute(name) || /^[A-Za-z]:/.test(name)) return 'is an absolute path';
  if (name.split('/').includes('..')) return 'has a .. segment, pointing outside the tree (zip-slip)';
  return undefined;
}

/** The entry's path inside `dest`, or the reason it may not be extracted at all. */
function target(dest: string, name: string): string {
  const problem = entryNameProblem(name);
  if (problem) throw new ExtractError(`the archive entry ${JSON.stringify(name)} ${problem}; refusing to extract`);
  const full = path.resolve(dest, name);
  if (full !== dest && !full.startsWith(dest + path.sep)) {
    throw new ExtractError(`the archive entry ${JSON.stringify(name)} points outside the archive; refusing to extract`);
  }
  return full;
}

/**
 * Extracts an uploaded zip into `destDir` (created), refusing absolute and `..` names, symlinks that lead out
 * of the tree, more entries than allowed and more bytes than allowed. The byte cap counts what is actually
 * inflated, so a zip bomb whose headers lie is stopped as soon as it passes the cap. Symlinks are made last,
 * after every file, so no file is ever written through one. On any refusal `destDir` is removed.
 */
export async function extractZip(
  zipPath: string,
  destDir: string,
  limits: ExtractLimits,
): Promise<{ entries: number; bytes: number }> {
  const dest = path.resolve(destDir);
  await fs.promises.mkdir(dest, { recursive: true });
  const zip = await openZip(zipPath).catch(async (err: unknown) => {
    await fs.promises.rm(dest, { recursive: true, force: true });
    throw err;
  });
  let entries = 0;
  let bytes = 0;
  const links: { at: string; to: string; name: string }[] = [];
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new ExtractError(
        `the archive has ${zip.entryCount} entries, more than the ${limits.maxEntries} allowed (BUILD_MAX_ENTRIES)`,
      );
    }
    const tooBig = () =>
      new ExtractError(
        `the archive inflates to more than ${limits.maxUncompressedBytes} bytes uncompressed (BUILD_MAX_UNCOMPRESSED_BYTES); refusing a possible zip bomb`,
      );
    await new Promise<void>((resolve, reject) => {
      const fail = (err: unknown) => reject(err instanceof ExtractError ? err : explain(err as Error));
      zip.on('error', fail);
      zip.on('end', resolve);
      zip.on('entry', (entry: yauzl.Entry) => {
        void (async () => {
          entries++;
          if (entries > limits.maxEntries)
            throw new ExtractError(`the archive has more than ${limits.maxEntries} entries`);
          const at = target(dest, entry.fileName);
          const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
          if (entry.fileName.endsWith('/')) {
            await fs.promises.mkdir(at, { recursive: true });
          } else if ((mode & S_IFMT) === S_IFLNK) {
            if (entry.uncompressedSize > 4096) throw new ExtractError(`the symlink ${entry.fileName} is malformed`);
            const chunks: Buffer[] = [];
            for await (const c of await streamOf(zip, entry)) chunks.push(c as Buffer);
            const to = Buffer.concat(chunks).toString('utf8');
            const resolved = path.resolve(path.dirname(at), to);
            if (path.isAbsolute(to) || (resolved !== dest && !resolved.startsWith(dest + path.sep))) {
              throw new ExtractError(
                `the archive entry ${JSON.stringify(entry.fileName)} is a symlink to ${JSON.stringify(to)}, outside the archive; refusing to extract`,
              );
            }
            links.push({ at, to, name: entry.fileName });
          } else {
            // The declared size refuses an honest bomb at once; the counter below catches one whose header lies.
            if (bytes + entry.uncompressedSize > limits.maxUncompressedBytes) throw tooBig();
            await fs.promises.mkdir(path.dirname(at), { recursive: true });
            const counter = new Transform({
              transform(chunk: Buffer, _enc, done) {
                bytes += chunk.length;
                done(bytes > limits.maxUncompressedBytes ? tooBig() : null, chunk);
              },
            });
            await pipeline(
              await streamOf(zip, entry),
              counter,
              fs.createWriteStream(at, { flags: 'wx', mode: mode & 0o111 ? 0o755 : 0o644 }),
            );
          }
          zip.readEntry();
        })().catch(fail);
      });
      zip.readEntry();
    });
    for (const link of links) {
      // A file of the same name from the archive would be replaced by the link; refuse the ambiguity instead.
      await fs.promises.symlink(link.to, link.at).catch((err: NodeJS.ErrnoException) => {
        throw new ExtractError(`the symlink ${link.name} cannot be created: ${err.code ?? err.message}`);
      });
    }
    return { entries, bytes };
  } catch (err) {
    await fs.promises.rm(dest, { recursive: true, force: true });
    if (err instanceof ExtractError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw new ExtractError(
      e.code === 'EEXIST'
        ? 'the archive holds the same path twice; refusing to extract'
        : `the archive could not be extracted: ${e.message}`,
    );
  } finally {
    zip.close();
  }
}

/** The one top-level folder an archive was made from (`my-site/…`), else `dir` itself: builds start at the project. */
export async function soleTopLevelDir(dir: string): Promise<string> {
  const entries = (await fs.promises.readdir(dir, { withFileTypes: true })).filter((e) => e.name !== '__MACOSX');
  const only = entries[0];
  return entries.length === 1 && only?.isDirectory() ? path.join(dir, only.name) : dir;
}
