import { type DeploymentView, FINAL, type LogLine, printable } from './view';

/** What a follower tells the person watching; one implementation draws on a terminal, the other prints lines. */
export interface Progress {
  deployment(d: DeploymentView): void;
  logs(lines: LogLine[]): void;
  note(text: string): void;
  /** The last frame stays: marked done or failed, or, when the user stopped watching, left as it was (■). */
  stop(interrupted?: boolean): void;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const LOG_LINES = 5;
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

function phasesOf(d: DeploymentView): string[] {
  return d.source.type === 'image'
    ? ['queued', 'deploying', 'running']
    : ['queued', 'building', 'deploying', 'running'];
}

/**
 * A frame redrawn in place ten times a second: the phases passed and current, elapsed time, the last event, the last
 * log lines. Lines are cut to the terminal's width, since a wrapped line would throw off the redraw.
 */
export function terminalProgress(out: NodeJS.WriteStream, startedAt = Date.now()): Progress {
  let current: DeploymentView | undefined;
  let tail: string[] = [];
  let note = '';
  let drawn = 0;
  let tick = 0;
  const width = () => Math.max(20, (out.columns || 80) - 1);
  const cut = (s: string) => (s.length > width() ? `${s.slice(0, width() - 1)}…` : s);

  function frame(end: 'no' | 'done' | 'interrupted'): string[] {
    const spin = end === 'interrupted' ? '■' : SPINNER[tick % SPINNER.length]!;
    if (!current) return [`${spin} submitting  ${seconds(startedAt)}`];
    const d = current;
    const failed = d.status === 'failed';
    const mark = end === 'done' ? (failed ? '✖' : '✔') : spin;
    const phases = phasesOf(d);
    const at = phases.indexOf(d.status);
    const steps = phases.map((p, i) => {
      if (p === d.status) return `${mark} ${p}`;
      return `${at > i || (at === -1 && end === 'done') ? '✔' : '○'} ${p}`;
    });
    if (failed) steps.push('✖ failed');
    const last = d.events?.at(-1)?.message;
    return [
      `${mark} ${d.name}  ${d.status}  ${seconds(startedAt)}`,
      `  ${steps.join('  ')}`,
      ...(last ? [`  ${printable(last).split('\n')[0]}`] : []),
      ...(note ? [`  ${note}`] : []),
      ...tail.map((l) => `  │ ${l}`),
    ].map(cut);
  }

  function draw(end: 'no' | 'done' | 'interrupted' = 'no') {
    const lines = frame(end);
    // Up to the frame's first line, then each line cleared and rewritten, then whatever is left below erased.
    const up = drawn > 0 ? `\u001b[${drawn}A\r` : '';
    out.write(`${up}${lines.map((l) => `\u001b[2K${l}\n`).join('')}\u001b[J`);
    drawn = lines.length;
  }

  out.write('\u001b[?25l');
  const restoreCursor = () => out.write('\u001b[?25h');
  process.once('exit', restoreCursor);
  const timer = setInterval(() => {
    tick++;
    draw();
  }, 100);
  draw();

  return {
    deployment(d) {
      current = d;
      if (FINAL.has(d.status)) note = '';
    },
    logs(lines) {
      tail = [...tail, ...lines.map((l) => printable(l.message))].slice(-LOG_LINES);
    },
    note(text) {
      note = text;
    },
    stop(interrupted) {
      clearInterval(timer);
      draw(interrupted ? 'interrupted' : 'done');
      restoreCursor();
      process.removeListener('exit', restoreCursor);
    },
  };
}

/** One line per new event and per new log line, for logs, pipes and CI: nothing is redrawn. */
export function plainProgress(out: NodeJS.WritableStream, startedAt = Date.now()): Progress {
  let seen = 0;
  const stamp = () => `[${seconds(startedAt).padStart(7)}]`;
  return {
    deployment(d) {
      const events = d.events ?? [];
      for (const e of events.slice(seen)) out.write(`${stamp()} ${e.status}: ${printable(e.message)}\n`);
      seen = Math.max(seen, events.length);
    },
    logs(lines) {
      for (const l of lines) out.write(`${stamp()}   | ${printable(l.message)}\n`);
    },
    note(text) {
      out.write(`${stamp()} ${text}\n`);
    },
    stop() {},
  };
}

/** Nothing on screen: --json prints only its result. */
export const silentProgress: Progress = { deployment() {}, logs() {}, note() {}, stop() {} };
