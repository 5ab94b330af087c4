import { startProcess } from './process';

/** A long-running child `npm start` keeps alive (the api, the worker). */
export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface Crash {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  logFile: string;
  /** Delay before the next start; undefined when the child is not restarted. */
  restartInMs?: number;
}

export interface SupervisorOptions {
  /** First restart delay, doubled after each crash that follows a short run, up to `maxDelayMs`. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A child that stayed up this long had recovered: its next crash waits `minDelayMs` again. */
  stableMs?: number;
  /** Whether a crash of `name` is restarted (start.ts says no until the stack was ready once). */
  shouldRestart?: (name: string) => boolean;
  /** One line per crash for the console. */
  report?: (line: string) => void;
}

export interface Supervisor {
  /** The process id of the child's current run, undefined while it waits to restart. */
  pid(name: string): number | undefined;
  /** How many times the child was started. */
  starts(name: string): number;
  /** Resolves at the child's next crash. */
  nextCrash(name: string): Promise<Crash>;
  /** Stops every child (SIGTERM, then SIGKILL after 15 s) and every pending restart. */
  stop(): Promise<void>;
}

interface ChildState {
  spec: ChildSpec;
  proc?: ReturnType<typeof startProcess>;
  starts: number;
  delayMs: number;
  timer?: NodeJS.Timeout;
  crashWaiters: ((crash: Crash) => void)[];
}

/**
 * Keeps each child running: a crash is reported with its log and the child alone is started again after a
 * backoff, so one child's death never takes the others (or the stack under them) down.
 */
export function supervise(children: ChildSpec[], opts: SupervisorOptions = {}): Supervisor {
  const minDelayMs = opts.minDelayMs ?? 1000;
  const maxDelayMs = opts.maxDelayMs ?? 30_000;
  const stableMs = opts.stableMs ?? 60_000;
  const states = new Map<string, ChildState>();
  let stopping = false;

  const run = (state: ChildState) => {
    state.timer = undefined;
    if (stopping) return;
    // Detached: a Ctrl-C at the terminal must not kill the children behind our back, or their exit would
    // read as a crash; we stop them ourselves, in order.
    let proc: ReturnType<typeof startProcess>;
    try {
      proc = startProcess(state.spec.name, state.spec.command, state.spec.args, {
        logFile: state.spec.logFile,
        env: state.spec.env,
        cwd: state.spec.cwd,
        detached: true,
      });
    } catch (err) {
      // Its log cannot be opened (a full or read-only disk): say so and try again later, like any crash.
      opts.report?.(
        `slipway: cannot start the ${state.spec.name} (${(err as Error).message}); retrying in ${formatDelay(state.delayMs)}`,
      );
      state.timer = setTimeout(() => run(state), state.delayMs);
      state.delayMs = Math.min(state.delayMs * 2, maxDelayMs);
      return;
    }
    state.proc = proc;
    state.starts++;
    const startedAt = Date.now();
    void proc.exited.then((code) => {
      if (stopping) return;
      state.proc = undefined;
      // Consecutive quick crashes back off; a run that lasted had recovered, so the next crash starts afresh.
      state.delayMs = Date.now() - startedAt >= stableMs ? minDelayMs : state.delayMs;
      const restart = opts.shouldRestart?.(state.spec.name) ?? true;
      const crash: Crash = {
        name: state.spec.name,
        code: code === -1 ? null : code,
        signal: proc.child.signalCode,
        logFile: state.spec.logFile,
        restartInMs: restart ? state.delayMs : undefined,
      };
      if (restart) {
        const how = crash.signal ? `killed by ${crash.signal}` : `exit code ${crash.code}`;
        opts.report?.(
          `slipway: the ${crash.name} crashed (${how}); restarting it in ${formatDelay(state.delayMs)}, log: ${crash.logFile}`,
        );
        state.timer = setTimeout(() => run(state), state.delayMs);
        state.delayMs = Math.min(state.delayMs * 2, maxDelayMs);
      }
      for (const waiter of state.crashWaiters.splice(0)) waiter(crash);
    });
  };

  for (const spec of children) {
    const state: ChildState = { spec, starts: 0, delayMs: minDelayMs, crashWaiters: [] };
    states.set(spec.name, state);
    run(state);
  }

  const get = (name: string) => {
    const state = states.get(name);
    if (!state) throw new Error(`no supervised child named ${name}`);
    return state;
  };
  return {
    pid: (name) => get(name).proc?.pid,
    starts: (name) => get(name).starts,
    nextCrash: (name) => new Promise((resolve) => get(name).crashWaiters.push(resolve)),
    async stop() {
      stopping = true;
      await Promise.all(
        [...states.values()].map(async (state) => {
          clearTimeout(state.timer);
          await state.proc?.stop();
        }),
      );
    },
  };
}

function formatDelay(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s` : `${ms} ms`;
}
