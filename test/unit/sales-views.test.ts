import { attemptView, deliverySummary, deliveryView } from '@api/features/sales/views';
import type { AttemptRecord, EventRecord } from '@shared/sales/store';

const attempt = (n: number, over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  number: n,
  key: `auto-${n}`,
  trigger: 'auto',
  scheduledAt: new Date(`2030-01-01T00:0${n}:00Z`),
  at: new Date(`2030-01-01T00:0${n}:01Z`),
  durationMs: 120,
  responseStatus: 503,
  responseHeaders: { 'content-type': 'text/plain' },
  responseBody: 'busy',
  errorClass: 'http_5xx',
  error: 'HTTP 503',
  nextAttemptAt: null,
  ...over,
});

const event = (attempts: AttemptRecord[]): EventRecord => ({
  _id: 'e1',
  orgId: 'o1',
  type: 'sale.completed',
  body: '{"id":"e1","type":"sale.completed"}',
  createdAt: new Date('2030-01-01T00:00:00Z'),
  status: 'pending',
  attempts,
});

describe('the deliveries log as REST and MCP show it', () => {
  it('summarises an event by its latest attempt and its response code, or none yet', () => {
    expect(deliverySummary(event([]))).toEqual({
      eventId: 'e1',
      type: 'sale.completed',
      status: 'pending',
      createdAt: '2030-01-01T00:00:00.000Z',
      attemptCount: 0,
      lastAttemptAt: null,
      lastResponseStatus: null,
    });
    expect(deliverySummary(event([attempt(1), attempt(2, { responseStatus: 200 })]))).toMatchObject({
      attemptCount: 2,
      lastAttemptAt: '2030-01-01T00:02:01.000Z',
      lastResponseStatus: 200,
    });
  });

  it('shows one event with its body as sent and every attempt, times as ISO strings', () => {
    const view = deliveryView(event([attempt(1, { nextAttemptAt: new Date('2030-01-01T00:05:00Z') })]));
    expect(view.body).toEqual({ id: 'e1', type: 'sale.completed' });
    expect(view.attempts).toEqual([
      {
        ...attempt(1),
        scheduledAt: '2030-01-01T00:01:00.000Z',
        at: '2030-01-01T00:01:01.000Z',
        nextAttemptAt: '2030-01-01T00:05:00.000Z',
      },
    ]);
    expect(view).toMatchObject(deliverySummary(event([attempt(1)])));
  });

  it('writes a resend with no next attempt as null', () => {
    expect(attemptView(attempt(3, { trigger: 'manual' })).nextAttemptAt).toBeNull();
  });
});
