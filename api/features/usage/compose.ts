import { createAiUsage } from '@shared/usage/ai-usage';
import { createBucketUsage } from '@shared/usage/bucket-usage';
import { createEdgeReadings } from '@shared/usage/edge-counters';
import { createUsageRecords } from '@shared/usage/hourly';
import { createUsageSources } from '@shared/usage/sources';
import { createStorageLedger } from '@shared/usage/storage-ledger';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createUsageService } from './service';

/** The usage service over the hourly records and the raw records they come from, made here with their indexes. */
export async function composeUsage(core: Core) {
  const cfg = core.config;
  const records = createUsageRecords(core.db);
  await records.ensureIndexes();
  await createAiUsage(core.db).ensureIndexes();
  await createEdgeReadings(core.db).ensureIndexes();
  return {
    usage: createUsageService({
      records,
      sources: createUsageSources(core.db, { sampleEveryS: cfg.METRICS_SAMPLE_S }),
      ledger: createStorageLedger(core.db),
      buckets: createBucketUsage(core.db, core.s3),
      retentionH: cfg.METRICS_RETENTION_H,
    }),
  };
}

export type UsageContext = FeatureContext<Awaited<ReturnType<typeof composeUsage>>>;
