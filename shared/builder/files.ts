import { createHash } from 'node:crypto';

import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

import { AppError } from '../errors';
import { BUILDER_LIMITS, type CheckpointRecord, type Manifest } from './types';

/**
 * Characters a file name may not hold: controls, and every character that is drawn as nothing (format characters
 * such as the bidirectional overrides U+202A–U+202E and isolates U+2066–U+2069, zero-width spaces and joiners, the
 * byte order mark, tag characters, Hangul fillers), since a name a person reads must be the name it is. Taken from
 * the Unicode properties the JavaScript engine knows (Cc, Cf, Zl, Zp, Default_Ignorable_Code_Point), not a hand
 * list; variation selectors stay allowed (they only pick a glyph of the visible character before them).
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
const isSelector = (c: number) => (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xe0100 && c <= 0xe01ef);
const hidden = (c: number) => !isSelector(c) && HIDDEN.test(String.fromCodePoint(c));

/** The hidden code points as ranges, once: a scan of every code point (about 30 ms). */
const HIDDEN_RANGES: [number, number][] = (() => {
  const ranges: [number, number][] = [];
  for (let c = 0; c <= 0x10ffff; c++) {
    if ((c >= 0xd800 && c <= 0xdfff) || !hidden(c)) continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === c - 1) last[1] = c;
    else ranges.push([c, c]);
  }
  return ranges;
})();

const u = (n: number) => `\\u${n.toString(16).padStart(4, '0')}`;
const span = (a: number, b: number) => (a === b ? u(a) : `${u(a)}-${u(b)}`);
const high = (c: number) => 0xd800 + ((c - 0x10000) >> 10);
const low = (c: number) => 0xdc00 + ((c - 0x10000) & 0x3ff);

/**
 * One regular expression for every rule but the bytes of a segment, written without flags as UTF-16 code units, so
 * the OpenAPI document can state it as the `pattern` of every path (`\uXXXX` escapes; a character beyond U+FFFF is
 * its surrogate pair). Segments are non-empty, never `.` or `..`, never `.git` in any letter case (nor the forms
 * Windows reads as `.git`: trailing dots or spaces, a `:stream`, the short name `git~1`), at any depth; no
 * backslash, drive letter, hidden character or unpaired surrogate.
 */
function pathPattern(): RegExp {
  const bmp = HIDDEN_RANGES.filter(([a]) => a <= 0xffff).map(([a, b]) => span(a, Math.min(b, 0xffff)));
  const astral: string[] = [];
  for (const [a, b] of HIDDEN_RANGES.filter(([, b]) => b > 0xffff)) {
    for (let from = Math.max(a, 0x10000); from <= b;) {
      const to = Math.min(b, ((from >> 10) << 10) + 0x3ff);
      astral.push(`${u(high(from))}[${span(low(from), low(to))}]`);
      from = to + 1;
    }
  }
  const unit = `[^/\\\\${bmp.join('')}\\ud800-\\udfff]`;
  const pair = `(?!${astral.join('|')})[\\ud800-\\udbff][\\udc00-\\udfff]`;
  const segment = `(?:${unit}|${pair})+`;
  const reserved = '(?:\\.\\.?|\\.[Gg][Ii][Tt][. ]*(?::[^/]*)?|[Gg][Ii][Tt]~1)';
  return new RegExp(`^(?![A-Za-z]:)(?!(?:[^/]*/)*${reserved}(?:/|$))${segment}(?:/${segment})*$`);
}

/** Every rule of pathProblem but the lengths, as one pattern (the zod schemas and the OpenAPI document use it). */
export const PATH_PATTERN = pathPattern();

/**
 * PATH_PATTERN for the OpenAPI document, over code points as JSON Schema tools read a pattern (Python's re, Rust's
 * regex, a JavaScript validator with the u flag): a hidden character beyond U+FFFF is written as itself, and no
 * surrogate range appears, since those engines refuse to compile one and then drop the whole pattern.
 */
export const PATH_DOCUMENT_PATTERN = (() => {
  const char = (c: number) => (c > 0xffff ? String.fromCodePoint(c) : u(c));
  const ranges = HIDDEN_RANGES.map(([a, b]) => (a === b ? char(a) : `${char(a)}-${char(b)}`));
  const segment = `[^/\\\\${ranges.join('')}]+`;
  const reserved = '(?:\\.\\.?|\\.[Gg][Ii][Tt][. ]*(?::[^/]*)?|[Gg][Ii][Tt]~1)';
  return `^(?![A-Za-z]:)(?!(?:[^/]*/)*${reserved}(?:/|$))${segment}(?:/${segment})*$`;
})();

/** The path rules in words, for the routes' descriptions. */
export const PATH_RULES_TEXT =
  'Paths are relative and /-separated: no absolute path or drive letter, no empty, . or .. segment, no backslash, no .git segment in any letter case at any depth (nor .git. or git~1), and no control or invisible character (bidirectional overrides, zero-width characters, the byte order mark)';

const codePoint = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;

/** The first hidden character or unpaired surrogate of `path`, as U+XXXX. */
function hiddenCharacter(path: string): string | undefined {
  for (let i = 0; i < path.length; i++) {
    const c = path.codePointAt(i)!;
    if (c > 0xffff) {
      if (hidden(c)) return codePoint(c);
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) return `${codePoint(c)}, half of a surrogate pair`;
    else if (hidden(c)) return codePoint(c);
  }
  return undefined;
}

/**
 * Why `path` cannot name a file of a session, or undefined. Paths are relative, `/`-separated, and mean the same
 * file on every system the files go to (S3, a sandbox container, a Git tree, a checkout on macOS or Windows): the
 * rules of PATH_PATTERN, each said in words, and at most 255 bytes per segment.
 */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'is empty';
  if (path.length > BUILDER_LIMITS.maxPathLength) return `is longer than ${BUILDER_LIMITS.maxPathLength} characters`;
  const invisible = hiddenCharacter(path);
  if (invisible)
    return `contains a control or invisible character (${invisible}); a name must show every character it holds`;
  if (path.includes('\\')) return 'contains a backslash; separate directories with /';
  if (path.startsWith('/')) return 'is absolute; write it relative to the app root, e.g. src/index.js';
  if (/^[A-Za-z]:/.test(path)) return 'starts with a drive letter; write it relative to the app root';
  const segments = path.split('/');
  if (segments.some((s) => s === '')) return 'has an empty segment (// or a trailing /)';
  if (segments.some((s) => s === '.' || s === '..')) return 'contains a . or .. segment';
  if (segments.some((s) => Buffer.byteLength(s) > 255)) return 'has a segment longer than 255 bytes';
  if (segments.some((s) => /^(?:\.git[. ]*(?::.*)?|git~1)$/i.test(s)))
    return 'has a .git segment (in some letter case or spelling), which the builder does not store';
  // The pattern and the words above are one rule set; a path only the pattern refuses is a gap in the words.
  if (!PATH_PATTERN.test(path)) return 'is not a valid relative path';
  return undefined;
}

/** Throws INVALID_REQUEST naming the path when it is not a valid file path. */
export function checkPath(path: string): void {
  const problem = pathProblem(path);
  if (problem) throw new AppError('INVALID_REQUEST', `The path ${JSON.stringify(path)} ${problem}.`, { path });
}

export const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export function toManifest(files: CheckpointRecord['files']): Manifest {
  const m: Manifest = {};
  for (const f of files) m[f.path] = { sha256: f.sha256, size: f.size };
  return m;
}

export function fromManifest(m: Manifest): CheckpointRecord['files'] {
  return Object.keys(m)
    .sort()
    .map((path) => ({ path, sha256: m[path]!.sha256, size: m[path]!.size }));
}

export function sameManifest(a: Manifest, b: Manifest): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => b[k]?.sha256 === a[k]!.sha256);
}

/**
 * Throws INVALID_REQUEST when a manifest passes the session caps (number of files, total bytes), or when a file is
 * a directory of another (`a` and `a/b` cannot both be files on a disk or in a Git tree).
 */
export function checkManifest(m: Manifest): void {
  const paths = Object.keys(m);
  if (paths.length > BUILDER_LIMITS.maxFiles)
    throw new AppError(
      'INVALID_REQUEST',
      `A session holds at most ${BUILDER_LIMITS.maxFiles} files; this change would make ${paths.length}. Delete files first.`,
      { files: paths.length, limit: BUILDER_LIMITS.maxFiles },
    );
  const total = paths.reduce((n, p) => n + m[p]!.size, 0);
  if (total > BUILDER_LIMITS.maxSessionBytes)
    throw new AppError(
      'INVALID_REQUEST',
      `A session holds at most ${BUILDER_LIMITS.maxSessionBytes} bytes of files; this change would make ${total}. Delete or shrink files first.`,
      { bytes: total, limit: BUILDER_LIMITS.maxSessionBytes },
    );
  const set = new Set(paths);
  for (const p of paths) {
    const segs = p.split('/');
    for (let i = 1; i < segs.length; i++) {
      const dir = segs.slice(0, i).join('/');
      if (set.has(dir))
        throw new AppError('INVALID_REQUEST', `${dir} is a file, so ${p} cannot be inside it; delete or rename one.`, {
          path: p,
        });
    }
  }
}

/**
 * File contents, content-addressed in S3 under `builder/<orgId>/<sha256>`: write-once (the same bytes are the same
 * object, so a retried or concurrent write of the same content is harmless) and never overwritten with other bytes.
 * Per organisation, so a digest known from one tenant never reads another tenant's object.
 */
export function createBlobStore(deps: { s3: S3Client; bucket: string }) {
  const key = (orgId: string, sha256: string) => `builder/${orgId}/${sha256}`;

  async function exists(orgId: string, sha256: string): Promise<boolean> {
    try {
      await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: key(orgId, sha256) }));
      return true;
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404) return false;
      throw err;
    }
  }

  return {
    /** Stores the bytes (checked against the per-file cap) and returns their address. */
    async put(orgId: string, bytes: Buffer): Promise<{ sha256: string; size: number }> {
      if (bytes.length > BUILDER_LIMITS.maxFileBytes)
        throw new AppError(
          'INVALID_REQUEST',
          `A file holds at most ${BUILDER_LIMITS.maxFileBytes} bytes; this one has ${bytes.length}.`,
          { bytes: bytes.length, limit: BUILDER_LIMITS.maxFileBytes },
        );
      const sha256 = sha256Hex(bytes);
      if (!(await exists(orgId, sha256)))
        await deps.s3.send(
          new PutObjectCommand({
            Bucket: deps.bucket,
            Key: key(orgId, sha256),
            Body: bytes,
            ContentLength: bytes.length,
            ContentType: 'application/octet-stream',
          }),
        );
      return { sha256, size: bytes.length };
    },

    async get(orgId: string, sha256: string): Promise<Buffer> {
      const res = await deps.s3.send(new GetObjectCommand({ Bucket: deps.bucket, Key: key(orgId, sha256) }));
      const bytes = Buffer.from(await res.Body!.transformToByteArray());
      // Content-addressed: bytes that do not hash to their name are a corrupted store, never served as the file.
      if (sha256Hex(bytes) !== sha256) throw new Error(`builder blob ${sha256} does not match its digest`);
      return bytes;
    },

    exists,
  };
}

export type BlobStore = ReturnType<typeof createBlobStore>;
