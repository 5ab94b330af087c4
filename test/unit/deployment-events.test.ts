import { defaultPayloadConverter } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';

import { commandTimeline } from '@api/features/deployments/command-progress';
import { decodeCursor, encodeCursor, EVENT_ID, START } from '@api/features/deployments/event-cursor';
import { advanceApp, engineNs } from '@shared/engine/follow';

describe('event IDs: one position per source, and the older three-part IDs still accepted', () => {
  it('reads back every position it wrote, app times at full nanosecond precision', () => {
    const c = {
      events: 12,
      logAt: 1_790_000_000_123,
      logSeq: 4711,
      settled: 9,
      cmdAt: 1_790_000_001_000,
      cmdN: 2,
      appNs: 1_790_000_002_123_456_789n,
      appN: 1,
    };
    const id = encodeCursor(c);
    expect(id).toMatch(EVENT_ID);
    expect(decodeCursor(id)).toEqual(c);
  });

  it('takes an ID of the three-part form as a position of its status and platform lines, the rest from the start', () => {
    expect(decodeCursor('7.1790000000123.-1')).toEqual({ ...START, events: 7, logAt: 1_790_000_000_123 });
    expect(() => decodeCursor('7.1790000000123')).toThrow(/Last-Event-ID/);
    expect(() => decodeCursor('7.1.2.3')).toThrow(/Last-Event-ID/);
  });
});

describe('app cursor: engine times as nanoseconds, with a tiebreak for lines of the same time', () => {
  it('parses the engine’s RFC 3339 times with any number of fraction digits', () => {
    expect(engineNs('2026-11-26T01:16:22.628729835Z')).toBe(1_795_655_782_628_729_835n);
    expect(engineNs('2026-11-26T01:16:22.6Z')).toBe(1_795_655_782_600_000_000n);
    expect(engineNs('2026-11-26T01:16:22Z')).toBe(1_795_655_782_000_000_000n);
    expect(engineNs('said hello')).toBeUndefined();
  });

  it('counts lines of one time, and leaves the cursor where it is for a late line', () => {
    let c = { ns: 0n, n: 0 };
    c = advanceApp(c, { ns: 5n });
    c = advanceApp(c, { ns: 5n });
    expect(c).toEqual({ ns: 5n, n: 2 });
    expect(advanceApp(c, { ns: 3n })).toEqual(c);
    expect(advanceApp(c, { ns: 6n })).toEqual({ ns: 6n, n: 1 });
  });
});

describe('commandTimeline: command progress from the workflow history', () => {
  const at = (s: number) => msToTs(1_789_999_980_000 + s * 1000);
  const accepted = (id: string, name: string, s: number) => ({
    eventTime: at(s),
    workflowExecutionUpdateAcceptedEventAttributes: { acceptedRequest: { meta: { updateId: id }, input: { name } } },
  });
  const completed = (id: string, s: number, outcome: object) => ({
    eventTime: at(s),
    workflowExecutionUpdateCompletedEventAttributes: { meta: { updateId: id }, outcome },
  });
  const success = (o: object) => ({ success: { payloads: [defaultPayloadConverter.toPayload(o)] } });

  it('starts commands one at a time in the order accepted, each ending with its release or why it failed', () => {
    const t = commandTimeline();
    const seen = [
      accepted('u1', 'redeploy', 1),
      accepted('u2', 'scale', 2),
      accepted('d', 'destroy', 2),
      completed('u1', 3, success({ command: 'redeploy', status: 'running', revision: 2, replicas: 1 })),
      completed('u2', 4, {
        failure: {
          message: 'scaling failed',
          applicationFailureInfo: { details: { payloads: [defaultPayloadConverter.toPayload({ revision: 2 })] } },
        },
      }),
      completed('d', 5, success({ command: 'destroy', status: 'running', revision: 2, replicas: 1 })),
    ].flatMap((e) => t(e as never));
    expect(seen.map((e) => [e.id, e.state, e.at.slice(17, 19), e.revision, e.message])).toEqual([
      ['u1', 'accepted', '01', undefined, undefined],
      ['u1', 'started', '01', undefined, undefined],
      ['u2', 'accepted', '02', undefined, undefined],
      ['u1', 'succeeded', '03', 2, undefined],
      ['u2', 'started', '03', undefined, undefined],
      ['u2', 'failed', '04', 2, 'scaling failed'],
    ]);
  });
});
