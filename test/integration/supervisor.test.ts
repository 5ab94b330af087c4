import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { type Crash, supervise, type Supervisor } from '@scripts/stack/supervisor';

/** Real child processes under the supervisor `npm start` runs the api and the worker with. */
let dir: string;
let sup: Supervisor | undefined;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-supervisor-'));
});

afterEach(async () => {
  await sup?.stop();
  sup = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

const alive = (pid: number | undefined) => {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const node = (name: string, code: string) => ({
  name,
  command: process.execPath,
  args: ['-e', code],
  logFile: path.join(dir, `${name}.log`),
});
const steady = () => node('worker', 'setInterval(() => {}, 1000)');
const crasher = () => node('api', 'console.error("boom"); process.exit(3)');

async function crashes(s: Supervisor, name: string, n: number): Promise<Crash[]> {
  const seen: Crash[] = [];
  while (seen.length < n) seen.push(await s.nextCrash(name));
  return seen;
}

describe('the npm start supervisor', () => {
  it('restarts a crashing child with a doubling backoff, reports each crash with its log, and keeps the others running', async () => {
    const lines: string[] = [];
    sup = supervise([steady(), crasher()], {
      minDelayMs: 20,
      maxDelayMs: 80,
      stableMs: 60_000,
      report: (l) => lines.push(l),
    });
    const worker = sup.pid('worker');

    const seen = await crashes(sup, 'api', 4);

    expect(seen.map((c) => [c.code, c.restartInMs])).toEqual([
      [3, 20],
      [3, 40],
      [3, 80],
      [3, 80],
    ]);
    expect(lines.slice(0, 2)).toEqual([
      `slipway: the api crashed (exit code 3); restarting it in 20 ms, log: ${path.join(dir, 'api.log')}`,
      `slipway: the api crashed (exit code 3); restarting it in 40 ms, log: ${path.join(dir, 'api.log')}`,
    ]);
    expect(fs.readFileSync(path.join(dir, 'api.log'), 'utf8').match(/boom/g)?.length).toBeGreaterThanOrEqual(4);
    expect(sup.pid('worker')).toBe(worker);
    expect(alive(worker)).toBe(true);
    expect(sup.starts('worker')).toBe(1);
  });

  it('brings back a killed worker, and starts the backoff afresh after a run that lasted', async () => {
    sup = supervise([steady(), node('api', 'setInterval(() => {}, 1000)')], { minDelayMs: 20, stableMs: 0 });
    const api = sup.pid('api');

    for (let i = 0; i < 2; i++) {
      const before = sup.pid('worker')!;
      const crash = sup.nextCrash('worker');
      process.kill(before, 'SIGKILL');
      expect(await crash).toMatchObject({ name: 'worker', code: null, signal: 'SIGKILL', restartInMs: 20 });
      while (sup.starts('worker') < i + 2) await new Promise((r) => setTimeout(r, 10));
      expect(alive(sup.pid('worker'))).toBe(true);
      expect(sup.pid('worker')).not.toBe(before);
    }
    expect(sup.pid('api')).toBe(api);
    expect(alive(api)).toBe(true);
  });

  it('does not restart when told not to, and stop() ends every child it started', async () => {
    sup = supervise([steady(), crasher()], { minDelayMs: 20, shouldRestart: () => false });
    const worker = sup.pid('worker');

    const crash = await sup.nextCrash('api');
    await sup.stop();

    expect(crash).toMatchObject({ name: 'api', code: 3, restartInMs: undefined });
    expect(sup.starts('api')).toBe(1);
    expect(alive(worker)).toBe(false);
  });
});
