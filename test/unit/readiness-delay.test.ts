import { READY_POLL_FIRST_MS, READY_POLL_MAX_MS, readyPollDelay } from '@activities/providers/engine-readiness';

describe('readiness probe pauses', () => {
  it('start short, never shrink, and back off to the longest pause', () => {
    const pauses = Array.from({ length: 20 }, (_, i) => readyPollDelay(i + 1));
    expect(pauses[0]).toBe(READY_POLL_FIRST_MS);
    expect(READY_POLL_FIRST_MS).toBeLessThanOrEqual(50);
    for (let i = 1; i < pauses.length; i++) expect(pauses[i]).toBeGreaterThanOrEqual(pauses[i - 1]!);
    expect(pauses.at(-1)).toBe(READY_POLL_MAX_MS);
    expect(Math.max(...pauses)).toBe(READY_POLL_MAX_MS);
    // Within its first second of waiting the wait has probed several times, not four.
    let waited = 0;
    let probes = 0;
    while (waited + readyPollDelay(probes + 1) <= 1000) waited += readyPollDelay(++probes);
    expect(probes).toBeGreaterThanOrEqual(6);
  });
});
