import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

import { StackError } from './stack-error';

/** A server process this run started, and therefore the only kind of process it may stop. */
export interface Managed {
  name: string;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

export function startProcess(
  name: string,
  command: string,
  args: string[],
  opts: {
    logFile: string;
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** Own process group: a Ctrl-C at the terminal reaches only us, and we decide what stops when. */
    detached?: boolean;
    /** Run as this account (a server that refuses to run as root). */
    user?: { uid: number; gid: number };
    /** The signal that stops it promptly (PostgreSQL's SIGTERM waits for every client to leave; SIGINT does not). */
    stopSignal?: NodeJS.Signals;
  },
): Managed & { child: ChildProcess; exited: Promise<number | null> } {
  const log = fs.openSync(opts.logFile, 'a');
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', log, log],
    detached: opts.detached ?? false,
    ...(opts.user ?? {}),
  });
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(opts.stopSignal ?? 'SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  return { name, pid: child.pid ?? -1, logFile: opts.logFile, child, exited, stop };
}

export function lastLines(file: string, n = 5): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-n).join(' | ');
  } catch {
    return ''; // the process wrote no log (yet): nothing to quote
  }
}

/** Polls `probe` until it resolves true; fails early when the process dies, with the tail of its log. */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  opts: { timeoutMs: number; proc?: { exited: Promise<number | null>; logFile: string }; signal?: AbortSignal },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let dead: number | null | undefined;
  // Not ready yet, most often; the last failure goes into the time-out's message, where it says why.
  let failed: unknown;
  void opts.proc?.exited.then((code) => (dead = code));
  while (Date.now() < deadline) {
    if (opts.signal?.aborted) throw new StackError(`stopped waiting for ${what}: start-up was interrupted`);
    if (dead !== undefined) {
      throw new StackError(`${what} exited (code ${dead}) before it was ready: ${lastLines(opts.proc!.logFile)}`);
    }
    const ready = await probe().catch((err: unknown) => {
      failed = err;
      return false;
    });
    if (ready) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const tail = opts.proc ? `: ${lastLines(opts.proc.logFile)}` : '';
  const last =
    failed === undefined ? '' : ` (last check: ${failed instanceof Error ? failed.message : String(failed)})`;
  throw new StackError(`${what} was not ready within ${Math.round(opts.timeoutMs / 1000)} s${last}${tail}`);
}

export function tcpOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Asks the kernel for a free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server and waits for `ready` (which may also finish setting it up); a server that never gets
 * ready is stopped again, so a failed start leaves nothing running.
 */
export async function startServer(
  what: string,
  spawnArgs: Parameters<typeof startProcess>,
  ready: () => Promise<boolean>,
  setup?: () => Promise<void>,
  signal?: AbortSignal,
): Promise<ReturnType<typeof startProcess>> {
  const proc = startProcess(...spawnArgs);
  try {
    await waitUntil(what, ready, { timeoutMs: 60_000, proc, signal });
    await setup?.();
    return proc;
  } catch (err) {
    await proc.stop();
    throw err;
  }
}
