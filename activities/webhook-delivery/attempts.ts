import { ApplicationFailure } from '@temporalio/common';

import { type LookupAll, OutboundTargetError, resolveTarget } from '@shared/net-guard';
import { signSalesBody, standardWebhookSignature } from '@shared/sales/signature';
import type { AttemptRecord, DeliveryStatus, EventRecord, SalesStore } from '@shared/sales/store';

import { createReceiverPool, RECEIVER_TIMEOUT_MS, type ReceiverPool } from './http';

export { RECEIVER_TIMEOUT_MS } from './http';

export interface AttemptInput {
  eventId: string;
  trigger: AttemptRecord['trigger'];
  /** When the workflow will try next, if this attempt fails; recorded on the attempt. */
  nextAttemptAt: string | null;
  /** The last scheduled attempt marks the event failed when it fails. */
  final: boolean;
  /** When the schedule placed this attempt (workflow time), recorded beside the real send time. */
  scheduledAt: string;
  /** Names the attempt: a retried activity finds it recorded and does not send again. */
  key: string;
}

export interface AttemptResult {
  outcome: 'delivered' | 'failed' | 'gone' | 'no_endpoint';
  number: number;
  responseStatus: number | null;
  errorClass: AttemptRecord['errorClass'];
}

/** One attempt as sent, carried from sendAttempt to recordAttempt through the workflow (dates as ISO strings). */
export interface SentAttempt {
  eventId: string;
  outcome: 'delivered' | 'failed' | 'gone';
  status: DeliveryStatus | null;
  attempt: Omit<AttemptRecord, 'number' | 'scheduledAt' | 'at' | 'nextAttemptAt'> & {
    scheduledAt: string;
    at: string;
    nextAttemptAt: string | null;
  };
}

export type SendResult = { kind: 'done'; result: AttemptResult } | ({ kind: 'sent' } & SentAttempt);

const resultOf = (a: AttemptRecord): AttemptResult => ({
  outcome: a.errorClass === null ? 'delivered' : a.responseStatus === 410 ? 'gone' : 'failed',
  number: a.number,
  responseStatus: a.responseStatus,
  errorClass: a.errorClass,
});

function classify(err: unknown): { errorClass: AttemptRecord['errorClass']; error: string } {
  const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  // The seller reads `error` in the deliveries log: our words per class, not Node's or undici's text.
  if (['TimeoutError', 'AbortError'].includes(e.name) || /TIMEOUT/.test(code))
    return { errorClass: 'timeout', error: `no answer within ${RECEIVER_TIMEOUT_MS / 1000} s` };
  if (['ENOTFOUND', 'EAI_AGAIN'].includes(code))
    return { errorClass: 'dns', error: 'the host name of the webhook URL does not resolve' };
  if (code === 'ECONNREFUSED')
    return { errorClass: 'refused', error: 'the receiver refused the connection: is it listening on that port?' };
  if (/CERT|SSL|TLS/i.test(code))
    return { errorClass: 'tls', error: 'the TLS handshake failed: the receiver’s certificate is not valid or trusted' };
  return { errorClass: 'network', error: 'the connection to the receiver failed or was cut before an answer' };
}

/**
 * One delivery attempt of one event: deliverAttempt sends it and records what happened in one go, run by the
 * workflow as a local activity (no task queue round trip of its own). When the record cannot be written (MongoDB
 * away after the send), it hands the outcome back instead of failing, and the workflow records it with
 * recordAttempt's retries: a lost write never sends the event again. sendAttempt and recordAttempt, the two halves as
 * separate activities, are what workflows started before deliverAttempt existed still run.
 */
export function createAttemptActivities(deps: {
  store: SalesStore;
  allowPrivateTargets: boolean;
  lookup?: LookupAll;
  /** Kept-alive connections to receivers, shared by every attempt of this worker. */
  receivers?: ReceiverPool;
}) {
  const { store } = deps;
  const receivers = deps.receivers ?? createReceiverPool();

  async function loadEvent(eventId: string): Promise<EventRecord> {
    const event = await store.getEventAny(eventId);
    // A missing event is not transient: retrying forever would hide the bug.
    if (!event) throw ApplicationFailure.create({ nonRetryable: true, message: `event ${eventId} does not exist` });
    return event;
  }

  /** Appends the attempt to `event` as read (its number is the next free one), then sets the status it implies. */
  async function record(event: EventRecord, input: SentAttempt): Promise<AttemptResult> {
    const a = input.attempt;
    const stored = await store.recordAttempt(
      event,
      {
        ...a,
        scheduledAt: new Date(a.scheduledAt),
        at: new Date(a.at),
        nextAttemptAt: a.nextAttemptAt ? new Date(a.nextAttemptAt) : null,
      },
      input.status ?? undefined,
    );
    return {
      outcome: input.outcome,
      number: stored.number,
      responseStatus: a.responseStatus,
      errorClass: a.errorClass,
    };
  }

  /**
   * Sends the stored body with freshly timestamped Standard Webhooks headers to the address the guard checked
   * (pinned: the name is resolved once), 8 s to answer 2xx, redirects not followed, the answer read up to 4 KB.
   * HTTP failures are results, not errors: only reading MongoDB throws (and is retried).
   */
  async function send(event: EventRecord, input: AttemptInput): Promise<SendResult> {
    const done = event.attempts.find((a) => a.key === input.key);
    if (done) return { kind: 'done', result: resultOf(done) };
    const webhook = (await store.getSeller(event.orgId))?.webhook;
    // The event waits for an endpoint: the outbox sweep starts its delivery again once one is saved.
    if (!webhook)
      return { kind: 'done', result: { outcome: 'no_endpoint', number: 0, responseStatus: null, errorClass: null } };

    const at = new Date();
    const sent = (
      a: Pick<
        AttemptRecord,
        'durationMs' | 'responseStatus' | 'responseHeaders' | 'responseBody' | 'errorClass' | 'error'
      >,
      outcome: SentAttempt['outcome'],
    ): SendResult => {
      // A failed test event is failed at once: nothing retries it.
      const failedForGood =
        outcome === 'gone' ||
        (outcome === 'failed' && (input.trigger === 'test' || (input.final && input.trigger === 'auto')));
      return {
        kind: 'sent',
        eventId: event._id,
        outcome,
        status: outcome === 'delivered' ? 'delivered' : failedForGood ? 'failed' : null,
        attempt: {
          key: input.key,
          trigger: input.trigger,
          scheduledAt: input.scheduledAt,
          at: at.toISOString(),
          nextAttemptAt: outcome === 'failed' ? input.nextAttemptAt : null,
          ...a,
        },
      };
    };
    const nothing = { durationMs: 0, responseStatus: null, responseHeaders: {}, responseBody: '' };

    const url = new URL(webhook.url);
    let target;
    try {
      target = await resolveTarget(url, { allowPrivate: deps.allowPrivateTargets, lookup: deps.lookup });
    } catch (err) {
      if (!(err instanceof OutboundTargetError)) throw err;
      const errorClass = err.kind === 'unresolvable' ? 'dns' : 'blocked';
      return sent(
        { ...nothing, errorClass, error: errorClass === 'dns' ? err.reason : `refused: ${err.reason}` },
        'failed',
      );
    }
    const secrets = webhook.secrets.filter((s) => !s.retiresAt || s.retiresAt > at).map((s) => s.value);
    const timestamp = Math.floor(at.getTime() / 1000);
    const started = performance.now();
    try {
      const res = await receivers.post(url, target, {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Slipway-Webhooks/1.0',
          'x-sales-signature': signSalesBody(event.body, secrets[0]!),
          'x-sales-event-id': event._id,
          'x-sales-event-type': event.type,
          'webhook-id': event._id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': standardWebhookSignature(event._id, timestamp, event.body, secrets),
        },
        body: event.body,
      });
      const ok = res.status >= 200 && res.status < 300;
      const errorClass = ok ? null : res.status < 400 ? 'http_3xx' : res.status < 500 ? 'http_4xx' : 'http_5xx';
      return sent(
        {
          durationMs: Math.round(performance.now() - started),
          responseStatus: res.status,
          responseHeaders: res.headers,
          responseBody: res.body,
          errorClass,
          error: ok ? null : `HTTP ${res.status}`,
        },
        ok ? 'delivered' : res.status === 410 ? 'gone' : 'failed',
      );
    } catch (err) {
      return sent({ ...nothing, durationMs: Math.round(performance.now() - started), ...classify(err) }, 'failed');
    }
  }

  return {
    /** One attempt sent and recorded; see the factory's comment for when the record is left to the workflow. */
    async deliverAttempt(input: AttemptInput): Promise<SendResult> {
      const event = await loadEvent(input.eventId);
      const sent = await send(event, input);
      if (sent.kind === 'done') return sent;
      try {
        const { kind: _kind, ...toRecord } = sent;
        return { kind: 'done', result: await record(event, toRecord) };
      } catch {
        // The event went out: retrying this activity would send it again. The workflow records it instead.
        return sent;
      }
    },

    async sendAttempt(input: AttemptInput): Promise<SendResult> {
      return send(await loadEvent(input.eventId), input);
    },

    /**
     * Appends the attempt once: a retry finds it by key. Reading then pushing is safe because one workflow (or one
     * resend workflow) owns each key and runs its activities one at a time.
     */
    async recordAttempt(input: SentAttempt): Promise<AttemptResult> {
      const event = await loadEvent(input.eventId);
      const done = event.attempts.find((a) => a.key === input.attempt.key);
      if (!done) return record(event, input);
      // Recorded by an earlier try that may have stopped before the status: setting it again is harmless.
      if (input.status) await store.setEventStatus(event._id, input.status);
      return resultOf(done);
    },
  };
}

export type AttemptActivities = ReturnType<typeof createAttemptActivities>;
