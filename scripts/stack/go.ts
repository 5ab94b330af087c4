import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

/**
 * Environment of every `go` command we run. GOTOOLCHAIN=local: a too-old toolchain is reported in one line
 * rather than silently replaced by a download of another one; CGO off: the tools are static and need no C compiler.
 */
function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0', GOTOOLCHAIN: 'local' };
}

/** Dotted version numbers compared field by field: `1.25.0` > `1.24` and `1.24` = `1.24.0`. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((n) => parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

let found: Promise<string> | undefined;

/** The installed toolchain's version (`1.26.8`), asked once; a missing `go` is said as such, nothing else is. */
export function goVersion(): Promise<string> {
  found ??= execFileAsync('go', ['env', 'GOVERSION'], { env: goEnv() }).then(
    ({ stdout }) => stdout.trim().replace(/^go/, ''),
    (err: NodeJS.ErrnoException & { stderr?: string }) => {
      found = undefined;
      if (err.code === 'ENOENT') throw new StackError('the Go toolchain (`go`) is not on PATH; install Go');
      throw new StackError(`\`go env GOVERSION\` failed: ${oneLine(err.stderr || err.message)}`);
    },
  );
  return found;
}

/** The `go` directive of a go.mod: the oldest toolchain that may build the module. */
export function goDirective(goMod: string): string | undefined {
  return /^go\s+(\d+(?:\.\d+){0,2})\s*$/m.exec(goMod)?.[1];
}

export function oneLine(text: string, lines = 3): string {
  return text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-lines)
    .join(' | ');
}

export interface RunOptions {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Why a `go` command did not succeed; `stdout` is kept because `go mod download -json` reports there. */
export class GoCommandError extends StackError {
  constructor(
    message: string,
    readonly stdout: string,
  ) {
    super(message);
  }
}

/**
 * Runs `go` in its own process group, so a time limit or a Ctrl-C stops the compilers it started too,
 * not only the `go` front end. Resolves with stdout; rejects naming the real cause.
 */
export function runGo(args: string[], opts: RunOptions): Promise<string> {
  const what = `go ${args[0]}${args[1] && !args[1].startsWith('-') ? ` ${args[1]}` : ''}`;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new StackError(`${what} was not started: start-up was interrupted`));
    const child = spawn('go', args, { cwd: opts.cwd, env: goEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    // go build can print a great deal on failure; the end says why.
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-16_384)));
    let stopped: string | undefined;
    const stop = (why: string) => {
      if (stopped || child.exitCode !== null || child.signalCode !== null) return;
      stopped = why;
      // The whole group at once: go and every compiler it started. A build has nothing to save on the way out.
      killGroup(child.pid, 'SIGKILL');
    };
    const limit = opts.timeoutMs >= 1000 ? `${Math.round(opts.timeoutMs / 1000)} s` : `${opts.timeoutMs} ms`;
    const timer = setTimeout(() => stop(`${what} did not finish within ${limit}`), opts.timeoutMs);
    const onAbort = () => stop(`${what} was stopped: start-up was interrupted`);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      // spawn reports a missing working directory exactly like a missing `go` (ENOENT): tell them apart.
      const why =
        err.code !== 'ENOENT'
          ? err.message
          : fs.existsSync(opts.cwd)
            ? 'the Go toolchain (`go`) is not on PATH; install Go'
            : `its working directory ${opts.cwd} does not exist`;
      reject(new StackError(`cannot run ${what}: ${why}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (stopped) return reject(new GoCommandError(stopped, stdout));
      if (code === 0) return resolve(stdout);
      const why = oneLine(stderr) || (signal ? `killed by ${signal}` : `exit code ${code}`);
      reject(new GoCommandError(`${what} failed: ${why}`, stdout));
    });
  });
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
