import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';

import type { UploadStore } from '@shared/uploads/store';

/** Deletes expired uploads, archive first and record second, so a crash in between only repeats the delete. */
export function createUploadExpiryActivities(deps: { store: UploadStore; s3: S3Client; bucket: string }) {
  return {
    async deleteExpiredUploads(input: { batch: number }): Promise<{ deleted: number; more: boolean }> {
      const expired = await deps.store.expired(new Date(), input.batch);
      for (const upload of expired) {
        await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: upload.key }));
        await deps.store.remove(upload._id);
      }
      return { deleted: expired.length, more: expired.length === input.batch };
    },
  };
}

export type UploadExpiryActivities = ReturnType<typeof createUploadExpiryActivities>;
