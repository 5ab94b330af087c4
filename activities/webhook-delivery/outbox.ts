import { completeSale, saleCompletedEventId } from '@shared/sales/records';
import type { SalesStore } from '@shared/sales/store';

/** Events one sweep call returns: one page of the outbox. */
const PAGE = 200;
/**
 * A sale is inserted before its event (two writes, no transaction on FerretDB): an api that died between them left a
 * sale without its event. Sales this recent are checked on every sweep; one younger than the settle time may still
 * have its request in flight (completing it twice is harmless, the IDs are derived, but pointless).
 */
const REPAIR_HORIZON_MS = 3600_000;
const REPAIR_SETTLE_MS = 30_000;
const REPAIR_BATCH = 1000;

export interface OutboxPage {
  /** Pending events of sellers that have an endpoint: their delivery workflows must be running. */
  toStart: string[];
  /** Where the next page starts; null when the outbox was read to the end. */
  next: { createdAt: string; id: string } | null;
  /** Events given up on: pending and never attempted for longer than the retry window. */
  expired: number;
  /** Sales found without their sale.completed event, which now have it. */
  repaired: number;
}

/** The outbox sweep's reads and its one write (giving up on events older than the window). */
export function createOutboxActivities(deps: { store: SalesStore }) {
  const { store } = deps;

  async function repairSales(): Promise<number> {
    const now = Date.now();
    const recent = await store.salesCreatedBetween(
      new Date(now - REPAIR_HORIZON_MS),
      new Date(now - REPAIR_SETTLE_MS),
      REPAIR_BATCH,
    );
    const present = new Set(await store.existingEventIds(recent.map((s) => saleCompletedEventId(s._id))));
    let repaired = 0;
    for (const sale of recent.filter((s) => !present.has(saleCompletedEventId(s._id)))) {
      const product = await store.getProduct(sale.orgId, sale.productId);
      if (!product) continue;
      await completeSale(store, sale, product);
      repaired++;
    }
    return repaired;
  }

  return {
    async readOutbox(input: { windowS: number; after: OutboxPage['next'] }): Promise<OutboxPage> {
      const since = new Date(Date.now() - input.windowS * 1000);
      let expired = 0;
      let repaired = 0;
      if (!input.after) {
        repaired = await repairSales();
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
        repaired,
      };
    },
  };
}

export type OutboxActivities = ReturnType<typeof createOutboxActivities>;
