import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'slipway.cjs');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

type Env = Record<string, string | undefined>;

/** Single-quoted for sh: `script -c` takes one command line. */
const sh = (args: string[]) => args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');

/**
 * The folder a run works in: `cwd` when given, else an empty one of its own, removed after it. A deploy links the
 * folder it runs in (.slipway/app.json), so runs sharing one would ship releases of each other's apps.
 */
function workingDir(cwd: string | undefined): { dir: string; done: () => void } {
  if (cwd) return { dir: cwd, done: () => undefined };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-cli-cwd-'));
  return { dir, done: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The `slipway` command run the two ways a person meets it; `env()` is read at each run (harness URL, token). */
export function cliRunner(env: () => Env) {
  /** As a shell or script runs it: its own process, stdin a pipe (fed `input`), no terminal anywhere. */
  function slipway(args: string[], opts: { env?: Env; input?: string; cwd?: string } = {}) {
    return new Promise<CliRun>((resolve) => {
      const work = workingDir(opts.cwd);
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...env(), ...opts.env },
        cwd: work.dir,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdin.end(opts.input ?? '');
      child.on('close', (code) => {
        work.done();
        resolve({ code, stdout, stderr });
      });
    });
  }

  /**
   * In a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are all the terminal, as for a person at
   * one. `keys` are typed once `prompt` has appeared on the screen.
   */
  function inTerminal(
    args: string[],
    dialog?: { prompt: string; keys: string },
    opts: { env?: Env; cwd?: string } = {},
  ) {
    return new Promise<{ code: number | null; screen: string }>((resolve) => {
      const work = workingDir(opts.cwd);
      const child = spawn('script', ['-q', '-e', '-c', sh([process.execPath, BIN, ...args]), '/dev/null'], {
        env: { ...env(), TERM: 'xterm-256color', CI: undefined, ...opts.env },
        cwd: work.dir,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let screen = '';
      let typed = false;
      child.stdout.on('data', (c: Buffer) => {
        screen += c.toString();
        if (dialog && !typed && screen.includes(dialog.prompt)) {
          typed = true;
          child.stdin.write(dialog.keys);
        }
      });
      child.stderr.on('data', (c: Buffer) => (screen += c.toString()));
      child.on('close', (code) => {
        child.stdin.destroy();
        work.done();
        resolve({ code, screen });
      });
    });
  }

  return { slipway, inTerminal, bin: BIN };
}

/**
 * The CLI as a person at a harness: a config folder of its own for the whole describe (removed after it), the
 * server's URL and the token given by `stack()` (read at each run), CI unset so a terminal is treated as one. Call it
 * in a describe; `home()` is the config folder, `env()` what a run sees (for a process started by hand).
 */
export function cliUser(stack: () => { baseUrl: string; token: string }) {
  let home: string | undefined;
  beforeAll(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-cli-home-'));
  });
  afterAll(() => {
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });
  const env = (): Env => ({
    ...process.env,
    SLIPWAY_URL: stack().baseUrl,
    SLIPWAY_TOKEN: stack().token,
    XDG_CONFIG_HOME: home,
    CI: undefined,
  });
  return { ...cliRunner(env), env, home: () => home! };
}
