import { createDeploymentStore } from '@shared/deployments/store';
import { createTicketStore } from '@shared/tickets/store';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createTicketService } from './service';

/** Tickets over their store (made here with its indexes); a ticket's deployment is checked in the deployments'. */
export async function composeTickets(core: Core) {
  const store = createTicketStore(core.db);
  await store.ensureIndexes();
  return {
    tickets: createTicketService({
      store,
      deployments: createDeploymentStore(core.db),
      lock: core.lock,
      quotaMultiplier: core.config.QUOTA_MULTIPLIER,
    }),
  };
}

export type TicketsContext = FeatureContext<Awaited<ReturnType<typeof composeTickets>>>;
