import { createSalesStore } from '@shared/sales/store';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createSalesService } from './service';

/** The sales service (its store's indexes made before the api serves). */
export async function composeSales(core: Core) {
  const store = createSalesStore(core.db);
  await store.ensureIndexes();
  return { sales: createSalesService({ store, temporal: core.temporal, config: core.config, log: core.log }) };
}

export type SalesContext = FeatureContext<Awaited<ReturnType<typeof composeSales>>>;
