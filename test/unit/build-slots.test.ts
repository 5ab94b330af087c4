import { buildResourceOptions, createBuildSlots, outOfMemory } from '@shared/build/sandbox';

describe('createBuildSlots', () => {
  const never = new AbortController().signal;

  it('bounds builds per worker and per organisation, first come first served', async () => {
    const slots = createBuildSlots(2, 1);
    const waits: string[] = [];
    const a1 = await slots.acquire('a', never);
    const b1 = await slots.acquire('b', never);
    let a2Started = false;
    let c1Started = false;
    const a2 = slots.acquire('a', never, (why) => waits.push(`a: ${why}`)).then((r) => ((a2Started = true), r));
    const c1 = slots.acquire('c', never, (why) => waits.push(`c: ${why}`)).then((r) => ((c1Started = true), r));
    await Promise.resolve();
    expect(slots.stats()).toEqual({ running: 2, waiting: 2, byOrg: { a: 1, b: 1 } });
    expect(waits).toEqual([
      "a: waiting for this organisation's other build to finish (1 at a time)",
      'c: waiting for a build slot (2 builds at a time on this worker)',
    ]);

    // b's slot frees: a still has one running, so c (queued later) goes first.
    b1();
    const releaseC = await c1;
    expect([a2Started, c1Started]).toEqual([false, true]);
    a1();
    const releaseA = await a2;
    expect(slots.stats()).toEqual({ running: 2, waiting: 0, byOrg: { a: 1, c: 1 } });
    releaseA();
    releaseA(); // twice is once
    releaseC();
    expect(slots.stats()).toEqual({ running: 0, waiting: 0, byOrg: {} });
  });

  it('lets a cancelled wait leave the queue without taking a slot', async () => {
    const slots = createBuildSlots(1, 1);
    const first = await slots.acquire('a', never);
    const cancel = new AbortController();
    const waiting = slots.acquire('b', cancel.signal);
    cancel.abort(new Error('destroyed'));
    await expect(waiting).rejects.toThrow('destroyed');
    first();
    expect(slots.stats()).toEqual({ running: 0, waiting: 0, byOrg: {} });
  });
});

describe('build resources', () => {
  it("gives the plan's memory without extra swap and its CPU as a quota", () => {
    expect(buildResourceOptions({ memoryMb: 256, cpus: 0.5, pids: 256 })).toEqual({
      memory: 256 * 1024 * 1024,
      memswap: 256 * 1024 * 1024,
      cpuperiod: 100_000,
      cpuquota: 50_000,
      shmsize: 64 * 1024 * 1024,
    });
  });

  it('recognises a step the kernel killed', () => {
    expect(outOfMemory("The command '/bin/sh -c x' returned a non-zero code: 137")).toBe(true);
    expect(outOfMemory("The command '/bin/sh -c x' returned a non-zero code: 1")).toBe(false);
    expect(outOfMemory("The command '/bin/sh -c x' returned a non-zero code: 1370")).toBe(false);
  });
});
