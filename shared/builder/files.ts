import { createHash } from 'node:crypto';

import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

import { AppError } from '../errors';
import { BUILDER_LIMITS, type CheckpointRecord, type Manifest } from './types';

/**
 * Why `path` cannot name a file of a session, or undefined. Paths are relative, `/`-separated, and mean the same
 * file on every system the files go to (S3, a sandbox container, a Git tree): no absolute path, no `.`/`..`
 * segment, no empty segment, no backslash (a separator on Windows), no control character, no `.git` directory.
 */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'is empty';
  if (path.length > BUILDER_LIMITS.maxPathLength) return `is longer than ${BUILDER_LIMITS.maxPathLength} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'contains a control character';
  if (path.includes('\\')) return 'contains a backslash; separate directories with /';
  if (path.startsWith('/')) return 'is absolute; write it relative to the app root, e.g. src/index.js';
  if (/^[A-Za-z]:/.test(path)) return 'starts with a drive letter; write it relative to the app root';
  const segments = path.split('/');
  if (segments.some((s) => s === '')) return 'has an empty segment (// or a trailing /)';
  if (segments.some((s) => s === '.' || s === '..')) return 'contains a . or .. segment';
  if (segments.some((s) => Buffer.byteLength(s) > 255)) return 'has a segment longer than 255 bytes';
  if (segments[0] === '.git') return 'is inside .git, which the builder does not store';
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
