import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';

import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import yauzl from 'yauzl';

import type { Config } from '../../../shared/config';
import { AppError } from '../../../shared/errors';
import type { Principal } from '../../../shared/identity/service';
import type { Logger } from '../../../shared/logger';
import { logFailure } from '../../../shared/request-context';
import type { UploadRecord, UploadStore } from '../../../shared/uploads/store';

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

export function createUploadService(deps: {
  store: UploadStore;
  s3: S3Client;
  config: Pick<Config, 'S3_BUCKET' | 'UPLOAD_TTL_S'>;
  log: Pick<Logger, 'warn'>;
}) {
  return {
    /** Stores a received zip (already on local disk, cut off at the size cap by multer) in S3 and records it. */
    async accept(
      principal: Principal,
      file: { path: string; originalname: string; size: number },
    ): Promise<UploadRecord> {
      await checkZip(file.path);
      const id = randomUUID();
      const key = `uploads/${principal.org._id}/${id}.zip`;
      const sha256 = await sha256Of(file.path);
      await deps.s3.send(
        new PutObjectCommand({
          Bucket: deps.config.S3_BUCKET,
          Key: key,
          Body: fs.createReadStream(file.path),
          ContentLength: file.size,
          ContentType: 'application/zip',
        }),
      );
      const now = new Date();
      const record: UploadRecord = {
        _id: id,
        orgId: principal.org._id,
        filename: file.originalname,
        size: file.size,
        sha256,
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
    },
  };
}

export type UploadService = ReturnType<typeof createUploadService>;
