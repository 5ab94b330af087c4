import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { settlePidFile } from '@scripts/stack/daemon-pid';

/**
 * A dockerd a stack is still stopping holds its pid file, and a second dockerd refuses to start beside it: the next
 * stack waits for the process the pid file names. A `sleep` stands in for the daemon.
 */
describe('a pid file of a daemon that does not answer', () => {
  let dir: string;
  let pidFile: string;
  const lines: string[] = [];
  const progress = (l: string) => void lines.push(l);
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-daemon-pid-'));
    pidFile = path.join(dir, 'daemon.pid');
    lines.length = 0;
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  const sleeper = () => {
    const child = spawn('sleep', ['300'], { stdio: 'ignore' });
    return { pid: child.pid!, exited: new Promise((r) => child.once('exit', r)), kill: () => child.kill('SIGTERM') };
  };

  it('is nothing to wait for when absent, or when the process it names is gone', async () => {
    const never = async () => false;
    expect(await settlePidFile({ name: 'd', pidFile, answers: never, progress })).toBe('gone');
    const gone = sleeper();
    gone.kill();
    await gone.exited;
    await fs.writeFile(pidFile, `${gone.pid}\n`);
    expect(await settlePidFile({ name: 'd', pidFile, answers: never, progress })).toBe('gone');
    expect(lines).toEqual([]);
  });

  it('waits, saying so, while the process stops, and is done once it has exited', async () => {
    const stopping = sleeper();
    await fs.writeFile(pidFile, String(stopping.pid));
    setTimeout(stopping.kill, 1_000);
    expect(await settlePidFile({ name: 'd', pidFile, answers: async () => false, progress })).toBe('gone');
    expect(lines).toEqual([
      expect.stringContaining(`d (process ${stopping.pid}, ${pidFile}) runs but does not answer`),
    ]);
  });

  it('uses a daemon that was still starting once it answers', async () => {
    const starting = sleeper();
    await fs.writeFile(pidFile, String(starting.pid));
    const readyAt = Date.now() + 700;
    try {
      expect(await settlePidFile({ name: 'd', pidFile, answers: async () => Date.now() > readyAt, progress })).toBe(
        'answers',
      );
    } finally {
      starting.kill();
    }
  });

  it('stops with a sentence naming the process when it neither answers nor exits', async () => {
    const stuck = sleeper();
    await fs.writeFile(pidFile, String(stuck.pid));
    try {
      await expect(
        settlePidFile({ name: 'd', pidFile, answers: async () => false, progress, timeoutMs: 600 }),
      ).rejects.toThrow(`d (process ${stuck.pid}, named by ${pidFile}) neither answered nor exited within 0.6 s`);
    } finally {
      stuck.kill();
    }
  });
});
