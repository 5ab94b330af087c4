import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Keys that open one bucket only, made by the object store's own identity machinery: MinIO service accounts of its
 * root user, each with an inline policy allowing the object work on that bucket and nothing else (a service
 * account's rights are its parent's cut down to its policy). Made and removed through MinIO's client `mc`, run as a
 * program: argv arrays (no shell), `--json`, a configuration directory of this process's own, and the root
 * credentials in `MC_HOST_<alias>`, which `ps` does not show. mc prints the secret it generated; it is returned to
 * the caller and never logged here.
 */
export interface ScopedKeys {
  /** Makes a key with access key `accessKeyId` for `bucket`; returns its secret. */
  create(bucket: string, accessKeyId: string): Promise<string>;
  /** Removes the key; one already gone is success. */
  revoke(accessKeyId: string): Promise<void>;
}

/** The store cannot make scoped keys (not MinIO, or mc is not configured): why, for the api to say. */
export class ScopedKeysUnavailable extends Error {
  override name = 'ScopedKeysUnavailable';
}

/** mc ran and said no; `code` is MinIO's error code when it gave one. Its text never carries a secret. */
export class ScopedKeyError extends Error {
  override name = 'ScopedKeyError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

const ALIAS = 'slw';
/** A hung store must not hold a request for ever; mc answers in well under a second when the store is up. */
const MC_TIMEOUT_MS = 30_000;
const ACCESS_KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** 20 characters as AWS's own: `SLW` and 17 random base-32 characters (85 bits). */
export function newAccessKeyId(): string {
  const bytes = randomBytes(17);
  return `SLW${[...bytes].map((b) => ACCESS_KEY_ALPHABET[b % 32]).join('')}`;
}

export const ACCESS_KEY_ID_PATTERN = /^SLW[A-Z2-7]{17}$/;

/**
 * What a bucket's key may do: list the bucket and read, write and delete its objects (multipart uploads and tags
 * included). Not the bucket itself: deleting it, or setting its policy (one public read would open it to anyone),
 * versioning, lifecycle, notifications, encryption or object lock, is the platform's to do through its own routes.
 */
export const KEY_BUCKET_ACTIONS = ['s3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'];
export const KEY_OBJECT_ACTIONS = [
  's3:GetObject',
  's3:PutObject',
  's3:DeleteObject',
  's3:AbortMultipartUpload',
  's3:ListMultipartUploadParts',
  's3:GetObjectTagging',
  's3:PutObjectTagging',
  's3:DeleteObjectTagging',
];

/** The inline policy of a bucket's key: that bucket and its objects, nothing on any other. */
export function bucketPolicy(bucket: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: KEY_BUCKET_ACTIONS, Resource: [`arn:aws:s3:::${bucket}`] },
      { Effect: 'Allow', Action: KEY_OBJECT_ACTIONS, Resource: [`arn:aws:s3:::${bucket}/*`] },
    ],
  });
}

interface McLine {
  status?: string;
  secretKey?: string;
  error?: { message?: string; cause?: { message?: string; error?: { Code?: string } } };
}

export function createMinioScopedKeys(opts: {
  binary: string;
  endpoint: string;
  rootUser: string;
  rootPassword: string;
}): ScopedKeys {
  const url = new URL(opts.endpoint);
  const hostUrl = `${url.protocol}//${encodeURIComponent(opts.rootUser)}:${encodeURIComponent(opts.rootPassword)}@${url.host}`;
  let configDir: Promise<string> | undefined;
  const dir = () => (configDir ??= fs.mkdtemp(path.join(os.tmpdir(), 'slipway-mc-')));

  async function mc(args: string[]): Promise<McLine> {
    const configDirPath = await dir();
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        opts.binary,
        ['--config-dir', configDirPath, '--json', '--quiet', '--no-color', '--disable-pager', ...args],
        {
          timeout: MC_TIMEOUT_MS,
          // Nothing of this process's environment (its other secrets) reaches mc: its alias and a PATH.
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: configDirPath, [`MC_HOST_${ALIAS}`]: hostUrl },
          maxBuffer: 1024 * 1024,
        },
        (err, out) => {
          // A refusal is printed as JSON on stdout with a non-zero exit: read it rather than the bare exit code.
          if (err && !out) reject(new ScopedKeyError(`mc could not run (${err.message.split('\n')[0]})`, undefined));
          else resolve(out);
        },
      );
    });
    const lines = stdout
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => JSON.parse(l) as McLine);
    const last = lines.at(-1);
    if (!last) throw new ScopedKeyError('mc printed no answer', undefined);
    if (last.status !== 'success') {
      const why = last.error?.cause?.message ?? last.error?.message ?? 'unknown error';
      throw new ScopedKeyError(`the object store refused: ${why}`, last.error?.cause?.error?.Code);
    }
    return last;
  }

  return {
    async create(bucket, accessKeyId) {
      const policyFile = path.join(await dir(), `policy-${accessKeyId}.json`);
      await fs.writeFile(policyFile, bucketPolicy(bucket), { mode: 0o600 });
      try {
        // No --secret-key: MinIO generates it and mc prints it, so it is never on a command line.
        const line = await mc([
          'admin',
          'user',
          'svcacct',
          'add',
          '--access-key',
          accessKeyId,
          '--policy',
          policyFile,
          ALIAS,
          opts.rootUser,
        ]);
        if (!line.secretKey) throw new ScopedKeyError('the object store made the key but sent no secret', undefined);
        return line.secretKey;
      } finally {
        await fs.rm(policyFile, { force: true });
      }
    },

    async revoke(accessKeyId) {
      try {
        await mc(['admin', 'user', 'svcacct', 'rm', ALIAS, accessKeyId]);
      } catch (err) {
        // Gone already (an earlier attempt, or never made): what was asked is true.
        if (err instanceof ScopedKeyError && err.code === 'XMinioInvalidIAMCredentials') return;
        throw err;
      }
    },
  };
}

/**
 * The scoped keys this installation can make, from its configuration; without MinIO (S3_ADMIN=none), mc
 * (MC_BINARY) or the store's root credentials, every call fails with ScopedKeysUnavailable saying which.
 */
export function scopedKeysFromConfig(cfg: {
  S3_ADMIN: 'minio' | 'none';
  MC_BINARY?: string | undefined;
  S3_ENDPOINT?: string | undefined;
  S3_ACCESS_KEY_ID?: string | undefined;
  S3_SECRET_ACCESS_KEY?: string | undefined;
}): ScopedKeys {
  const why =
    cfg.S3_ADMIN !== 'minio'
      ? 'this installation’s object store is not MinIO (S3_ADMIN=none): it has no admin API for keys scoped to one bucket; the operator makes such keys in the store itself (README, "Buckets")'
      : !cfg.MC_BINARY
        ? 'MinIO’s client mc is not configured (MC_BINARY): the operator must set it for keys scoped to one bucket'
        : !cfg.S3_ENDPOINT || !cfg.S3_ACCESS_KEY_ID || !cfg.S3_SECRET_ACCESS_KEY
          ? 'the object store’s endpoint and root credentials are not configured (S3_ENDPOINT, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY)'
          : undefined;
  if (why) {
    const refuse = () => Promise.reject(new ScopedKeysUnavailable(why));
    return { create: refuse, revoke: refuse };
  }
  return createMinioScopedKeys({
    binary: cfg.MC_BINARY!,
    endpoint: cfg.S3_ENDPOINT!,
    rootUser: cfg.S3_ACCESS_KEY_ID!,
    rootPassword: cfg.S3_SECRET_ACCESS_KEY!,
  });
}
