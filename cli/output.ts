import { CliError } from './errors';
import { plainProgress, type Progress, silentProgress, terminalProgress } from './progress';

/** How a command talks: one JSON document on stdout with --json, people's text otherwise. */
export interface Output {
  json: boolean;
  /** A live display on a terminal, plain lines otherwise, nothing for --json. Progress goes to stderr. */
  progress(startedAt?: number): Progress;
  /**
   * One line per status change and log line on stderr, terminal or not (nothing for --json): for a release replacing
   * a serving one, whose deployment stays running throughout, so the phases the live display draws do not apply.
   */
  lines(startedAt?: number): Progress;
  result(value: unknown, text: string): void;
  info(text: string): void;
}

/** A terminal that can redraw: not when piped, in CI, or on a dumb terminal. */
export const isInteractive = (s: NodeJS.WriteStream) =>
  Boolean(s.isTTY) && process.env.TERM !== 'dumb' && !process.env.CI;

export function output(json: boolean): Output {
  return {
    json,
    progress: (startedAt) =>
      json
        ? silentProgress
        : isInteractive(process.stderr)
          ? terminalProgress(process.stderr, startedAt)
          : plainProgress(process.stderr, startedAt),
    lines: (startedAt) => (json ? silentProgress : plainProgress(process.stderr, startedAt)),
    result(value, text) {
      process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
    },
    // Notes go to stderr even with --json: stdout stays one document a script can parse.
    info(text) {
      process.stderr.write(`${text}\n`);
    },
  };
}

/** "90s", "15m", "1h" → milliseconds. */
export function parseTimeout(value: string): number {
  const m = /^(\d+)(s|m|h)?$/.exec(value.trim());
  if (!m) throw new CliError(`--timeout ${value} is not a duration`, 'write it as 90s, 15m or 1h');
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}
