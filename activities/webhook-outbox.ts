import type { SalesStore } from '../shared/db/sales-store';

/** Events one sweep call returns: one page of the outbox. */
const PAGE = 200;

export interface OutboxPage {
  /** Pending events of sellers that have an endpoint: their delivery workflows must be running. */
  toStart: string[];
  /** Where the next page starts; null when the outbox was read to the end. */
  next: { createdAt: string; id: string } | null;
  /** Events given up on: pending and never attempted for longer than the retry window. */
  expired: number;
}

/** The outbox sweep's reads and its one write (giving up on events older than the window). */
export function createOutboxActivities(deps: { store: SalesStore }) {
  const { store } = deps;
  return {
    async readOutbox(input: { windowS: number; after: OutboxPage['next'] }): Promise<OutboxPage> {
      const since = new Date(Date.now() - input.windowS * 1000);
      let expired = 0;
      if (!input.after) {
        for (const id of await store.unattemptedBefore(since, PAGE)) {
          await store.failPending(id);
          expired++;
        }
      }
      const after = input.after ? { createdAt: new Date(input.after.createdAt), id: input.after.id } : null;
      const page = await store.pendingEventsSince(since, after, PAGE);
      const withEndpoint = new Set(await store.sellersWithWebhook([...new Set(page.map((e) => e.orgId))]));
      const last = page.at(-1);
      return {
        toStart: page.filter((e) => withEndpoint.has(e.orgId)).map((e) => e._id),
        next: page.length === PAGE && last ? { createdAt: last.createdAt.toISOString(), id: last._id } : null,
        expired,
      };
    },
  };
}

export type OutboxActivities = ReturnType<typeof createOutboxActivities>;
