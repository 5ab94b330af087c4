// `npm run bench`: the deploy and webhook benchmarks in turn, then one table of every figure beside its goal and
// the baseline measured in the same run. Prints, never fails: a figure a bench could not give is shown as such.
// The build benchmark takes many minutes (every run installs from the registry) and stays its own command,
// `npm run bench:build`.
import { spawn } from 'node:child_process';
import path from 'node:path';

import { deployBench, type DeployFigures, printDeployFigures, showMemory, showThroughput } from './deploy';
import { median } from './harness';

/** What the webhook benchmark printed, read line by line; any of it may be missing if its output changed. */
export interface WebhookFigures {
  firstAttemptMedianMs?: number;
  sustainedPerS?: number;
  sold?: number;
  delivered?: number;
  pending?: number;
  /** Deliveries the log holds as failed once the backlog drained. */
  failed?: number;
}

const num = (m: RegExpMatchArray | null | undefined) => (m ? Number(m[1]!.replace(/,/g, '')) : undefined);

/**
 * Reads the webhook benchmark's output (bench/webhooks.ts, whose lines are its own and may change): each figure
 * is looked for on its own, and one that is not found stays undefined rather than wrong.
 */
export function parseWebhookOutput(out: string): WebhookFigures {
  const lines = out.split('\n');
  const line = (re: RegExp) => lines.find((l) => re.test(l));
  const first = line(/first (delivery|attempt)/i);
  const sustained = line(/sustained/i);
  const afterDrain = line(/log after the drain/i);
  return {
    firstAttemptMedianMs: num(first?.match(/median\s+([\d.,]+)\s*ms/i)),
    sustainedPerS: num(sustained?.match(/([\d.,]+)\s*deliveries\/s/i)),
    sold: num(sustained?.match(/([\d,]+)\s+sales recorded/i)),
    delivered: num(sustained?.match(/([\d,]+)\s+delivered/i)),
    pending: num(sustained?.match(/([\d,]+)\s+still pending/i)) ?? (sustained ? 0 : undefined),
    failed: num(afterDrain?.match(/([\d,]+)\s+failed/i)),
  };
}

/** Runs bench/webhooks.ts as its own process (it starts its own stack), its output shown as it comes. */
async function webhookBench(): Promise<{ figures: WebhookFigures; failed?: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'webhooks.ts')], {
    cwd: path.resolve(__dirname, '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    process.stdout.write(c);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { figures: parseWebhookOutput(out), failed: code === 0 ? undefined : `exit code ${code}` };
}

type Row = [figure: string, goal: string, measured: string, baseline: string, met: string];

const ms = (v: number) => `${v.toFixed(0)} ms`;
const verdict = (ok: boolean | undefined) => (ok === undefined ? '?' : ok ? 'yes' : 'no');

export function tableRows(d: DeployFigures | undefined, w: WebhookFigures | undefined): Row[] {
  const rows: Row[] = [];
  const missing = (figure: string, goal: string, why: string): Row => [figure, goal, `not measured (${why})`, '', '?'];
  if (d) {
    const s = median(d.deploy.slipwayMs);
    const b = median(d.deploy.bareMs);
    rows.push([
      `deploy to running + first answer (median of ${d.deploy.n})`,
      '≤ 1.5× bare',
      `${ms(s)} (${(s / b).toFixed(2)}×)`,
      `bare docker run + first answer ${ms(b)}`,
      verdict(s / b <= 1.5),
    ]);
    rows.push([
      'POST /compat/deploy 202 @20 clients',
      'p99 < 100 ms',
      `p50 ${d.accept.p50} ms, p99 ${d.accept.p99} ms (${d.accept.sent} sent, ${d.accept.non2xx} non-2xx)`,
      '',
      verdict(d.accept.p99 < 100 && d.accept.non2xx === 0),
    ]);
    for (const { processes, reads } of d.statusReads)
      rows.push([
        `GET /compat/deployments/{id} @20 conns, ${processes} api process${processes > 1 ? 'es' : ''}`,
        '≥ 3,000 req/s, p99 < 20 ms',
        showThroughput(reads),
        `/healthz ${showThroughput(d.healthz)}`,
        verdict(reads.rps >= 3000 && reads.p99 < 20 && reads.non2xx === 0),
      ]);
    rows.push([
      'GET /compat/providers (authenticated constant) @20 conns',
      '(none: shows what auth costs)',
      showThroughput(d.constantRead),
      `/healthz ${showThroughput(d.healthz)}`,
      '',
    ]);
    const after = d.memory.afterBench;
    rows.push([
      'resident memory after the bench',
      'api < 150 MB, worker < 300 MB',
      showMemory(after),
      `at rest: ${showMemory(d.memory.atRest)}`,
      verdict(after.api.every((m) => m < 150) && after.worker < 300),
    ]);
  } else {
    rows.push(missing('deploy, status reads, 202s, memory', 'see README', 'the deploy bench failed'));
  }
  if (w?.firstAttemptMedianMs !== undefined)
    rows.push([
      'first webhook attempt after a sale (median)',
      'median < 150 ms',
      ms(w.firstAttemptMedianMs),
      '',
      verdict(w.firstAttemptMedianMs < 150),
    ]);
  else rows.push(missing('first webhook attempt after a sale', 'median < 150 ms', 'not in the webhook output'));
  if (w?.sustainedPerS !== undefined) {
    const lost = w.sold !== undefined && w.delivered !== undefined ? w.sold - w.delivered : w.pending;
    const failed = w.failed ? `, ${w.failed} failed` : '';
    rows.push([
      'webhook deliveries sustained for 60 s',
      '≥ 200/s, nothing lost',
      `${w.sustainedPerS.toFixed(1)}/s; ${lost === undefined ? 'lost: unknown' : `${lost} of ${w.sold ?? '?'} not delivered`}${failed}`,
      '',
      verdict(lost === undefined ? undefined : w.sustainedPerS >= 200 && lost === 0 && !w.failed),
    ]);
  } else rows.push(missing('webhook deliveries sustained for 60 s', '≥ 200/s, nothing lost', 'not in its output'));
  return rows;
}

export function renderTable(rows: Row[]): string {
  const head: Row = ['figure', 'goal', 'measured', 'baseline (same run)', 'met'];
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: Row) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

async function main() {
  const began = new Date();
  let deploy: DeployFigures | undefined;
  try {
    deploy = await deployBench();
    printDeployFigures(deploy);
  } catch (err) {
    console.error('the deploy bench failed:', err);
  }
  const webhooks = await webhookBench();
  if (webhooks.failed) console.error(`the webhook bench ended with ${webhooks.failed}`);
  console.log(
    `\nSlipway benchmarks, ${began.toISOString()} to ${new Date().toISOString()} (${process.arch}, node ${process.version})\n`,
  );
  console.log(renderTable(tableRows(deploy, webhooks.figures)));
}

if (require.main === module) void main();
