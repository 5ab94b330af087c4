import type { AttemptRecord, EventRecord, SalesStore } from '../shared/db/sales-store';
import { privateTargetReason } from '../shared/net-guard';
import { signSalesBody, standardWebhookSignature } from '../shared/sales/signature';

/** The receiver must answer 2xx within this (spec, "Delivery"). */
export const RECEIVER_TIMEOUT_MS = 8000;
const BODY_KEEP_BYTES = 4096;

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

function classify(err: unknown): { errorClass: AttemptRecord['errorClass']; error: string } {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? '';
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return { errorClass: 'timeout', error: `no answer within ${RECEIVER_TIMEOUT_MS / 1000} s` };
  if (['ENOTFOUND', 'EAI_AGAIN'].includes(code)) return { errorClass: 'dns', error: e.cause?.message ?? code };
  if (code === 'ECONNREFUSED') return { errorClass: 'refused', error: e.cause?.message ?? code };
  if (/CERT|SSL|TLS/i.test(code)) return { errorClass: 'tls', error: e.cause?.message ?? code };
  return { errorClass: 'network', error: e.cause?.message ?? e.message };
}

/**
 * One delivery attempt of one event: the stored body, freshly timestamped Standard Webhooks headers, 8 s to
 * answer 2xx, redirects not followed. The attempt is recorded whatever happens; the workflow decides what next.
 */
export function createWebhookActivities(deps: { store: SalesStore; allowPrivateTargets: boolean }) {
  const { store } = deps;
  return {
    async deliverAttempt(input: AttemptInput): Promise<AttemptResult> {
      const event = (await store.getEventAny(input.eventId)) as EventRecord;
      const done = event.attempts.find((a) => a.key === input.key);
      if (done) {
        const outcome = done.errorClass === null ? 'delivered' : done.responseStatus === 410 ? 'gone' : 'failed';
        return { outcome, number: done.number, responseStatus: done.responseStatus, errorClass: done.errorClass };
      }
      const seller = await store.getSeller(event.orgId);
      const number = event.attempts.length + 1;
      const at = new Date();
      const nextAttemptAt = input.nextAttemptAt ? new Date(input.nextAttemptAt) : null;
      const webhook = seller?.webhook;
      if (!webhook) {
        await store.setEventStatus(event._id, 'pending');
        return { outcome: 'no_endpoint', number, responseStatus: null, errorClass: null };
      }
      const record = async (
        a: Omit<AttemptRecord, 'number' | 'key' | 'trigger' | 'scheduledAt' | 'at' | 'nextAttemptAt'>,
        result: AttemptResult['outcome'],
      ) => {
        const failedForGood = result === 'gone' || (result === 'failed' && input.final && input.trigger === 'auto');
        const status = result === 'delivered' ? 'delivered' : failedForGood ? 'failed' : undefined;
        const next = result === 'delivered' || result === 'gone' ? null : nextAttemptAt;
        const scheduledAt = new Date(input.scheduledAt);
        await store.recordAttempt(
          event._id,
          { number, key: input.key, trigger: input.trigger, scheduledAt, at, nextAttemptAt: next, ...a },
          status,
        );
        return { outcome: result, number, responseStatus: a.responseStatus, errorClass: a.errorClass };
      };

      const url = new URL(webhook.url);
      const blocked = deps.allowPrivateTargets ? undefined : await privateTargetReason(url);
      if (blocked) {
        return record(
          {
            durationMs: 0,
            responseStatus: null,
            responseHeaders: {},
            responseBody: '',
            errorClass: 'blocked',
            error: `refused: ${blocked}`,
          },
          'failed',
        );
      }
      const now = new Date();
      const secrets = webhook.secrets.filter((s) => !s.retiresAt || s.retiresAt > now).map((s) => s.value);
      const timestamp = Math.floor(now.getTime() / 1000);
      const started = performance.now();
      try {
        const res = await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          signal: AbortSignal.timeout(RECEIVER_TIMEOUT_MS),
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
        const text = (await res.text()).slice(0, BODY_KEEP_BYTES);
        const durationMs = Math.round(performance.now() - started);
        const headers = Object.fromEntries(res.headers.entries());
        const ok = res.status >= 200 && res.status < 300;
        const errorClass = ok ? null : res.status < 400 ? 'http_3xx' : res.status < 500 ? 'http_4xx' : 'http_5xx';
        return record(
          {
            durationMs,
            responseStatus: res.status,
            responseHeaders: headers,
            responseBody: text,
            errorClass,
            error: ok ? null : `HTTP ${res.status}`,
          },
          ok ? 'delivered' : res.status === 410 ? 'gone' : 'failed',
        );
      } catch (err) {
        const durationMs = Math.round(performance.now() - started);
        return record(
          { durationMs, responseStatus: null, responseHeaders: {}, responseBody: '', ...classify(err) },
          'failed',
        );
      }
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
