import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';

import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import yauzl from 'yauzl';

import type { Config } from '@shared/config';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { Logger } from '@shared/logger';
import { logFailure } from '@shared/request-context';
import { checkProjectFiles, fileLimits, type ProjectFile, zipProjectFiles } from '@shared/uploads/files';
import type { UploadRecord, UploadStore } from '@shared/uploads/store';

/** Opens the archive's central directory; a file that is not a readable zip is refused before it is stored. */
async function checkZip(file: string): Promise<number> {
  const head = Buffer.alloc(4);
  const fd = await fs.promises.open(file, 'r');
  try {
    await fd.read(head, 0, 4, 0);
  } finally {
    await fd.close();
  }
  if (head.toString('binary') !== 'PK\x03\x04' && head.toString('binary') !== 'PK\x05\x06') {
    throw new AppError('INVALID_REQUEST', 'The archive is not a zip file (it does not start with the zip signature).');
  }
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err || !zip) {
        // yauzl's text names zip internals a caller cannot act on; the caller learns what to do instead.
        reject(
          new AppError(
            'INVALID_REQUEST',
            'The archive is not a readable zip file: it is truncated or damaged. Create it again with a zip tool and upload it whole.',
          ),
        );
        return;
      }
      resolve(zip.entryCount);
      zip.close();
    });
  });
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

/** Files zipped by pack, ready to store. */
export interface PackedFiles {
  zip: Buffer;
  files: number;
  sha256: string;
}

export function createUploadService(deps: {
  store: UploadStore;
  s3: S3Client;
  config: Pick<
    Config,
    'S3_BUCKET' | 'UPLOAD_TTL_S' | 'UPLOAD_MAX_BYTES' | 'BUILD_MAX_ENTRIES' | 'BUILD_MAX_UNCOMPRESSED_BYTES'
  >;
  log: Pick<Logger, 'warn'>;
}) {
  /** Puts the archive in S3 under a new ID of the caller's org, then records it (removing the object if that fails). */
  async function store(
    principal: Principal,
    archive: { filename: string; size: number; sha256: string; body: () => Buffer | fs.ReadStream },
  ): Promise<UploadRecord> {
    const id = randomUUID();
    const key = `uploads/${principal.org._id}/${id}.zip`;
    await deps.s3.send(
      new PutObjectCommand({
        Bucket: deps.config.S3_BUCKET,
        Key: key,
        Body: archive.body(),
        ContentLength: archive.size,
        ContentType: 'application/zip',
      }),
    );
    const now = new Date();
    const record: UploadRecord = {
      _id: id,
      orgId: principal.org._id,
      filename: archive.filename,
      size: archive.size,
      sha256: archive.sha256,
      key,
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.config.UPLOAD_TTL_S * 1000),
    };
    try {
      await deps.store.insert(record);
    } catch (err) {
      // No record names the object, so nothing else will remove it: the log line is how an operator finds it.
      await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.config.S3_BUCKET, Key: key })).catch(
        logFailure(deps.log, 'an upload whose record failed is left in the bucket', {
          bucket: deps.config.S3_BUCKET,
          key,
        }),
      );
      throw err;
    }
    return record;
  }

  return {
    /** Stores a received zip (already on local disk, cut off at the size cap by multer) in S3 and records it. */
    async accept(
      principal: Principal,
      file: { path: string; originalname: string; size: number },
    ): Promise<UploadRecord> {
      await checkZip(file.path);
      return store(principal, {
        filename: file.originalname,
        size: file.size,
        sha256: await sha256Of(file.path),
        body: () => fs.createReadStream(file.path),
      });
    },

    /**
     * A project given as files, zipped: held first to an uploaded zip's rules and caps (and, `inline`, to the smaller
     * caps of a call's body), so a deploy of it is a deploy of a zip. Nothing is stored yet (acceptPacked does).
     */
    async pack(files: ProjectFile[], opts: { inline: boolean }): Promise<PackedFiles> {
      const limits = fileLimits(deps.config, opts.inline);
      checkProjectFiles(files, limits);
      const zip = await zipProjectFiles(files);
      if (zip.length > limits.zipBytes.max)
        throw new AppError(
          'INVALID_REQUEST',
          `The files zip to ${zip.length} bytes, more than the ${limits.zipBytes.max} ${limits.zipBytes.name}.`,
          { bytes: zip.length, limit: limits.zipBytes.max },
        );
      return { zip, files: files.length, sha256: createHash('sha256').update(zip).digest('hex') };
    },

    /** A packed project as an upload of the caller's org, as an uploaded zip is stored. */
    acceptPacked: (principal: Principal, packed: PackedFiles, filename: string): Promise<UploadRecord> =>
      // Made by our own writer: no signature to check, unlike an archive a client sent.
      store(principal, { filename, size: packed.zip.length, sha256: packed.sha256, body: () => packed.zip }),
  };
}

export type UploadService = ReturnType<typeof createUploadService>;
