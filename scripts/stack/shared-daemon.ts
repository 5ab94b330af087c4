import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { ifAbsent } from '@shared/ignore';

import { withMachineLock } from './machine-lock';
import { cacheDir } from './paths';
import type { Managed } from './process';

/**
 * A daemon several stacks on one machine use at once (dockerd: `npm start` and `npm test` side by side). Each stack
 * using it holds a lease; the stack that started it records the daemon's pid; and whichever stack leaves last stops
 * it — never one that leaves while another still uses it (a test run ending must not take a running `npm start`'s
 * deployments down with it). A daemon no stack started (the host's own) is never stopped.
 */
export function sharedDaemon(name: string) {
  const dir = () => path.join(cacheDir(), `${name}.users`);
  const ownerFile = () => path.join(dir(), 'started-by-stack');
  const lockName = `${name}-users`;
  const quiet = () => undefined;

  async function join(): Promise<string> {
    await fs.promises.mkdir(dir(), { recursive: true });
    // The pid first: a lease of a process that is gone (killed, crashed) is not counted.
    const lease = `${process.pid}.${randomBytes(4).toString('hex')}.lease`;
    await fs.promises.writeFile(path.join(dir(), lease), '');
    return lease;
  }

  async function othersThan(lease: string): Promise<string[]> {
    const entries = await fs.promises.readdir(dir()).catch(ifAbsent([] as string[]));
    const live: string[] = [];
    for (const entry of entries.filter((e) => e.endsWith('.lease') && e !== lease)) {
      if (alive(Number(entry.split('.')[0]))) live.push(entry);
      else await fs.promises.rm(path.join(dir(), entry), { force: true });
    }
    return live;
  }

  async function startedPid(): Promise<number | undefined> {
    const pid = Number(await fs.promises.readFile(ownerFile(), 'utf8').catch(ifAbsent('')));
    return pid > 0 && alive(pid) ? pid : undefined;
  }

  /**
   * Leaves; true when this was the last user, and then the daemon a stack started is stopped (`stop`, or a
   * signal to the recorded pid when another stack started it). Under the machine lock, so two stacks leaving
   * at once cannot both see the other and leave the daemon running with no user.
   */
  async function leave(lease: string, stop?: () => Promise<void>): Promise<boolean> {
    return withMachineLock(lockName, quiet, undefined, async () => {
      await fs.promises.rm(path.join(dir(), lease), { force: true });
      if ((await othersThan(lease)).length > 0) return false;
      const pid = await startedPid();
      if (stop) await stop();
      else if (pid) await terminate(pid);
      await fs.promises.rm(ownerFile(), { force: true });
      return true;
    });
  }

  return {
    /**
     * The stack that started the daemon: `daemon.stop` runs only when no other stack uses it any more. Leaving
     * while others do, it lets go of the daemon's process, or this process could not exit before the daemon does
     * (a test run would hang after its last test); the last user stops it by its recorded pid.
     */
    async started(daemon: Managed & { child?: Pick<ChildProcess, 'unref'> }): Promise<Managed> {
      const lease = await withMachineLock(lockName, quiet, undefined, async () => {
        await fs.promises.mkdir(dir(), { recursive: true });
        await fs.promises.writeFile(ownerFile(), String(daemon.pid));
        return join();
      });
      return {
        ...daemon,
        stop: async () => {
          if (!(await leave(lease, () => daemon.stop()))) daemon.child?.unref();
        },
      };
    },

    /**
     * A stack found the daemon running. If a stack started it, this one holds a lease and may be the one that
     * stops it; if not (the host's own), there is nothing to hold.
     */
    async found(): Promise<Managed[]> {
      const lease = await withMachineLock(lockName, quiet, undefined, async () =>
        (await startedPid()) ? join() : undefined,
      );
      if (!lease) return [];
      const pid = (await startedPid()) ?? -1;
      return [{ name: `${name} (shared)`, pid, logFile: '', stop: async () => void (await leave(lease)) }];
    },
  };
}

/** Whether the process runs (one of another user counts too). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGTERM, then SIGKILL after 15 s (as a stack stops what it started itself). */
async function terminate(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return; // gone already: nothing to stop
    throw err;
  }
  const deadline = Date.now() + 15_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}
