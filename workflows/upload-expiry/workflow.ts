import { proxyActivities } from '@temporalio/workflow';

import type { UploadExpiryActivities } from '@activities/upload-expiry';

const { deleteExpiredUploads } = proxyActivities<UploadExpiryActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumInterval: '1 minute' },
});

/** Run by the upload-expiry schedule: deletes expired archives and their records, a batch at a time. */
export async function expireUploadsWorkflow(): Promise<number> {
  let total = 0;
  for (;;) {
    const { deleted, more } = await deleteExpiredUploads({ batch: 100 });
    total += deleted;
    if (!more) return total;
  }
}
