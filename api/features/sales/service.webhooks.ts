import { randomBytes, randomUUID } from 'node:crypto';

import { webhookWorkflowId } from '@shared/contracts/webhook-delivery';
import { AppError } from '@shared/errors';
import { privateTargetReason } from '@shared/net-guard';
import { eventPayload } from '@shared/sales/records';
import type { SalesStore } from '@shared/sales/store';

import { type EventDelivery, notFound, type SalesDeps } from './delivery';

/** A replaced signing secret keeps signing the Standard Webhooks header this long (rotation overlap). */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** The seller's endpoint and signing secrets, and what was sent to it: the deliveries log, a resend, a test event. */
export function createWebhookService(deps: SalesDeps, delivery: EventDelivery) {
  const { store, config } = deps;

  async function checkTarget(url: URL) {
    if (!['http:', 'https:'].includes(url.protocol))
      throw new AppError('INVALID_REQUEST', 'The webhook URL must be http:// or https://.');
    const reason = await privateTargetReason(url, { allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_TARGETS });
    if (reason) throw new AppError('INVALID_REQUEST', `The webhook URL is refused: ${reason}.`);
  }

  return {
    /** Saves the endpoint and returns a new signing secret once; the old one overlaps for 24 h unless rotated at once. */
    async setWebhook(orgId: string, input: { url: string; rotateImmediately?: boolean }) {
      const hadEndpoint = Boolean((await store.getSeller(orgId))?.webhook);
      const url = new URL(input.url);
      await checkTarget(url);
      const now = new Date();
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const previous = (await store.getSeller(orgId))?.webhook?.secrets ?? [];
      const kept = input.rotateImmediately
        ? []
        : previous
            .filter((s) => !s.retiresAt || s.retiresAt > now)
            .map((s) => ({ ...s, retiresAt: s.retiresAt ?? new Date(now.getTime() + ROTATION_OVERLAP_MS) }));
      await store.setWebhook(orgId, { url: url.toString(), secrets: [{ value: secret, createdAt: now }, ...kept] });
      // Events recorded while there was no endpoint are waiting: sweep now rather than at the next interval.
      if (!hadEndpoint) await delivery.sweepNow(orgId);
      return { url: url.toString(), secret };
    },

    async getWebhook(orgId: string) {
      const webhook = (await store.getSeller(orgId))?.webhook;
      if (!webhook) return { url: null, secret: null, previousSecretsValidUntil: [] };
      const [current, ...old] = webhook.secrets;
      const now = new Date();
      return {
        url: webhook.url,
        secret: `${current!.value.slice(0, 10)}…${current!.value.slice(-4)}`,
        previousSecretsValidUntil: old
          .filter((s) => s.retiresAt && s.retiresAt > now)
          .map((s) => s.retiresAt!.toISOString()),
      };
    },

    /** A `test` event with a sample sale, sent once now. */
    async sendTest(orgId: string) {
      if (!(await store.getSeller(orgId))?.webhook)
        throw new AppError('INVALID_REQUEST', 'Save a webhook URL first: PUT /platform/sales/webhook.');
      const id = randomUUID();
      const createdAt = new Date();
      // A sale of a made-up product, shaped by the same function as every real event.
      const body = eventPayload(
        id,
        'test',
        createdAt,
        {
          _id: randomUUID(),
          buyer: { email: 'buyer@example.com', name: 'Test Buyer' },
          quantity: 1,
          amount: 0,
          currency: 'USD',
          salesCode: 'TEST',
        },
        { _id: 'test-product', name: 'Test product', billingType: 'ONE_TIME' },
        null,
      );
      await store.insertEvent({
        _id: id,
        orgId,
        type: 'test',
        body,
        createdAt,
        status: 'pending',
        attempts: [],
      });
      const { outcome } = await delivery.attemptNow(`${webhookWorkflowId(id)}/test`, { eventId: id, trigger: 'test' });
      return { eventId: id, outcome };
    },

    /** One new attempt now, same event ID and body; answers with that attempt, or `queued` when no worker took it. */
    async resend(orgId: string, eventId: string) {
      const event = await store.getEvent(orgId, eventId);
      if (!event) throw notFound('event', eventId);
      const workflowId = `${webhookWorkflowId(eventId)}/manual-${event.attempts.length + 1}-${randomUUID().slice(0, 8)}`;
      const { outcome } = await delivery.attemptNow(workflowId, { eventId, trigger: 'manual' });
      if (outcome === 'queued') return { outcome, attempt: undefined };
      const after = (await store.getEvent(orgId, eventId))!;
      return { outcome, attempt: after.attempts.find((a) => a.key === workflowId) };
    },

    /** The deliveries log, newest first; `since` as the wire sends it (an ISO time). */
    listDeliveries: (
      orgId: string,
      q: Omit<Parameters<SalesStore['listEvents']>[0], 'orgId' | 'since'> & { since?: string | undefined },
    ) => store.listEvents({ ...q, orgId, since: q.since ? new Date(q.since) : undefined }),

    async getDelivery(orgId: string, eventId: string) {
      const event = await store.getEvent(orgId, eventId);
      if (!event) throw notFound('event', eventId);
      return event;
    },
  };
}
