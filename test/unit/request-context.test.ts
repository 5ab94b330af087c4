import type { Logger } from '@shared/logger';
import { currentRequestId, logFailure, runWithRequestContext } from '@shared/request-context';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('request context', () => {
  it('is absent outside a request', () => {
    expect(currentRequestId()).toBeUndefined();
  });

  it('follows the request across awaits and timers, and ends with it', async () => {
    const seen = await runWithRequestContext({ requestId: 'r1' }, async () => {
      const before = currentRequestId();
      await tick();
      const after = await new Promise((r) => setImmediate(() => r(currentRequestId())));
      return [before, after];
    });
    expect(seen).toEqual(['r1', 'r1']);
    expect(currentRequestId()).toBeUndefined();
  });

  it('keeps concurrent requests apart, and an inner one does not leak into the outer', async () => {
    const serve = (id: string, delays: number[]) =>
      runWithRequestContext({ requestId: id }, async () => {
        const ids: (string | undefined)[] = [];
        for (const ms of delays) {
          await new Promise((r) => setTimeout(r, ms));
          ids.push(currentRequestId());
        }
        return ids;
      });
    const [a, b] = await Promise.all([serve('a', [3, 1, 2]), serve('b', [1, 3, 1])]);
    expect(a).toEqual(['a', 'a', 'a']);
    expect(b).toEqual(['b', 'b', 'b']);
    await runWithRequestContext({ requestId: 'outer' }, async () => {
      expect(runWithRequestContext({ requestId: 'inner' }, () => currentRequestId())).toBe('inner');
      expect(currentRequestId()).toBe('outer');
    });
  });

  it('returns what the function returns', () => {
    expect(runWithRequestContext({ requestId: 'r' }, () => 42)).toBe(42);
  });

  it("logs a failure a request goes on without under that request's ID, and resolves it to undefined", async () => {
    const lines: [Record<string, unknown>, string][] = [];
    const log = {
      warn: (fields: Record<string, unknown>, message?: string) => void lines.push([fields, message ?? '']),
    } as unknown as Pick<Logger, 'warn'>;
    const err = new Error('bucket unreachable');
    const settled = await runWithRequestContext({ requestId: 'r7' }, () =>
      Promise.reject(err).catch(logFailure(log, 'object left behind', { key: 'k' })),
    );
    expect(settled).toBeUndefined();
    expect(lines).toEqual([[{ err, requestId: 'r7', key: 'k' }, 'object left behind']]);
  });
});
