import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { startProcess } from '@scripts/stack/process';
import { sharedDaemon } from '@scripts/stack/shared-daemon';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false; // ESRCH: it is gone
  }
};

/** Two stacks, as `npm start` and `npm test` side by side; a `sleep` stands in for dockerd. */
describe('a daemon several stacks share', () => {
  let cache: string;
  const before = process.env.SLIPWAY_CACHE_DIR;
  beforeEach(async () => {
    cache = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-shared-daemon-'));
    process.env.SLIPWAY_CACHE_DIR = cache;
  });
  afterEach(async () => {
    if (before === undefined) delete process.env.SLIPWAY_CACHE_DIR;
    else process.env.SLIPWAY_CACHE_DIR = before;
    await fs.rm(cache, { recursive: true, force: true });
  });

  const startDaemon = () => startProcess('daemon', 'sleep', ['300'], { logFile: path.join(cache, 'daemon.log') });

  it('keeps running when the stack that started it stops while another uses it; the last one out stops it', async () => {
    const daemon = startDaemon();
    const first = await sharedDaemon('d').started(daemon);
    const second = await sharedDaemon('d').found();
    expect(second).toHaveLength(1);

    await first.stop();
    expect(alive(daemon.pid)).toBe(true);
    await second[0]!.stop();
    await daemon.exited;
    expect(alive(daemon.pid)).toBe(false);
  });

  it('lets the stack that started it exit when it leaves while another uses it', async () => {
    const root = path.resolve(__dirname, '..', '..');
    const starter = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(root, 'test', 'fixtures', 'scripts', 'daemon-starter.ts')],
      {
        cwd: root,
        env: { ...process.env, SLIPWAY_CACHE_DIR: cache, TSX_TSCONFIG_PATH: path.join(root, 'tsconfig.json') },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => starter.once('exit', resolve));
    const pid = await new Promise<number>((resolve) => starter.stdout.once('data', (c: Buffer) => resolve(Number(c))));
    const other = await sharedDaemon('d').found();
    expect(other).toHaveLength(1);
    starter.stdin.end('leave\n');
    // A starter still tied to the daemon's process would wait as long as the daemon runs (300 s here).
    const outcome = await Promise.race([
      exited.then((code) => ({ code })),
      new Promise((resolve) => setTimeout(() => resolve('still running 60 s after it left'), 60_000).unref()),
    ]);
    if (outcome === 'still running 60 s after it left') starter.kill('SIGKILL');
    expect(outcome).toEqual({ code: 0 });
    expect(alive(pid)).toBe(true);
    await other[0]!.stop();
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
  }, 90_000);

  it('is stopped by the stack that started it when no other uses it', async () => {
    const daemon = startDaemon();
    const only = await sharedDaemon('d').started(daemon);
    await only.stop();
    expect(daemon.child.exitCode !== null || daemon.child.signalCode !== null).toBe(true);
  });

  it('is never stopped when no stack started it (the host runs it), and a finder then holds nothing', async () => {
    expect(await sharedDaemon('d').found()).toEqual([]);
  });

  it('does not count the lease of a stack that is gone', async () => {
    const daemon = startDaemon();
    const owner = await sharedDaemon('d').started(daemon);
    // A stack killed without stopping: its lease names a pid that no longer runs.
    const gone = startProcess('gone', 'true', [], { logFile: path.join(cache, 'gone.log') });
    await gone.exited;
    await fs.writeFile(path.join(cache, 'd.users', `${gone.pid}.deadbeef.lease`), '');
    await owner.stop();
    expect(daemon.child.exitCode !== null || daemon.child.signalCode !== null).toBe(true);
  });
});
