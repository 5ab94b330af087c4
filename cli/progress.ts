import { timeline } from './timeline';
import { type DeploymentView, type LogLine, printable, type StatusEvent } from './view';

/** What a follower tells the person watching; one implementation draws on a terminal, the other prints lines. */
export interface Progress {
  /** The deployment as read: when it was accepted, and once it has settled. */
  deployment(d: DeploymentView): void;
  /** A status change, as it happened. */
  event(e: StatusEvent): void;
  logs(lines: LogLine[]): void;
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
  let lastEvent: string | undefined;
  let tail: string[] = [];
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
    return [
      `${mark} ${d.name}  ${d.status}  ${seconds(startedAt)}`,
      `  ${steps.join('  ')}`,
      ...(lastEvent ? [`  ${printable(lastEvent).split('\n')[0]}`] : []),
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
      lastEvent = d.events?.at(-1)?.message ?? lastEvent;
    },
    event(e) {
      if (current) current = { ...current, status: e.status };
      lastEvent = e.message;
    },
    logs(lines) {
      tail = [...tail, ...lines.map((l) => printable(l.message))].slice(-LOG_LINES);
    },
    stop(interrupted) {
      clearInterval(timer);
      draw(interrupted ? 'interrupted' : 'done');
      restoreCursor();
      process.removeListener('exit', restoreCursor);
    },
  };
}

/**
 * One line per status change and per log line, for logs, pipes and CI: nothing is redrawn, so the lines are put in
 * the order they happened before they are printed (see timeline.ts).
 */
export function plainProgress(out: NodeJS.WritableStream, startedAt = Date.now()): Progress {
  const stamp = () => `[${seconds(startedAt).padStart(7)}]`;
  // A status change may be held back a moment (see timeline.ts): it shows when it arrived, not when it was printed.
  const arrived = new WeakMap<StatusEvent, string>();
  const ordered = timeline({
    status: (e) => out.write(`${arrived.get(e) ?? stamp()} ${e.status}: ${printable(e.message)}\n`),
    log: (l) => out.write(`${stamp()}   | ${printable(l.message)}\n`),
  });
  return {
    deployment() {},
    event(e) {
      arrived.set(e, stamp());
      ordered.status(e);
    },
    logs: (lines) => ordered.logs(lines),
    stop: () => ordered.flush(),
  };
}

/** Nothing on screen: --json prints only its result. */
export const silentProgress: Progress = { deployment() {}, event() {}, logs() {}, stop() {} };
