import { parseWebhookOutput, renderTable, tableRows } from '@bench/all';
import type { DeployFigures } from '@bench/deploy';

// What bench/webhooks.ts prints today; its lines are another bench's own and may change.
const WEBHOOK_OUTPUT = `
Slipway webhook benchmark (2026-11-26T04:40:00.000Z, node v20.20.2)
POST /platform/sales → first attempt arrives (n=20)  median 41 ms  p90 77 ms
sustained 60 s, 8 sales in flight            212.4 deliveries/s arrived (12,800 sales recorded, 12,790 delivered after drain, 10 still pending when the bench stopped waiting)
all 12790 deliveries of the window, sale to arrival     190.2 deliveries/s over 67 s
deliveries log after the drain (12820 sales)             12810 delivered, 10 pending, 0 failed
`;

const throughput = (rps: number, p99: number) => ({ rps, p50: 1, p99, non2xx: 0, errors: 0 });
const deploy: DeployFigures = {
  deploy: { n: 3, slipwayMs: [900, 1000, 1100], bareMs: [500, 600, 700] },
  accept: { p50: 40, p99: 90, sent: 100, non2xx: 0 },
  statusReads: [
    { processes: 1, reads: throughput(3200, 15) },
    { processes: 2, reads: throughput(2900, 25) },
  ],
  constantRead: throughput(4000, 10),
  healthz: throughput(6000, 8),
  memory: { atRest: { api: [150], worker: 220 }, afterBench: { api: [180, 140, 145], apiPrimary: 60, worker: 260 } },
};

describe('npm run bench: the table', () => {
  it("reads the webhook bench's figures from its output, each on its own", () => {
    expect(parseWebhookOutput(WEBHOOK_OUTPUT)).toEqual({
      firstAttemptMedianMs: 41,
      sustainedPerS: 212.4,
      sold: 12800,
      delivered: 12790,
      pending: 10,
      failed: 0,
    });
    // An output it does not recognise gives no figure rather than a wrong one.
    expect(parseWebhookOutput('something else entirely')).toEqual({
      firstAttemptMedianMs: undefined,
      sustainedPerS: undefined,
      sold: undefined,
      delivered: undefined,
      pending: undefined,
      failed: undefined,
    });
  });

  it('prints every goal beside its figure, its same-run baseline and whether it was met', () => {
    const rows = tableRows(deploy, parseWebhookOutput(WEBHOOK_OUTPUT));
    const byFigure = Object.fromEntries(rows.map((r) => [r[0], r]));
    expect(byFigure['deploy to running + first answer (median of 3)']).toEqual([
      'deploy to running + first answer (median of 3)',
      '≤ 1.5× bare',
      '1000 ms (1.67×)',
      'bare docker run + first answer 600 ms',
      'no',
    ]);
    expect(byFigure['POST /compat/deploy 202 @20 clients']?.[4]).toBe('yes');
    expect(byFigure['GET /compat/deployments/{id} @20 conns, 1 api process']?.[4]).toBe('yes');
    expect(byFigure['GET /compat/deployments/{id} @20 conns, 2 api processes']?.[4]).toBe('no');
    expect(byFigure['GET /compat/providers (authenticated constant) @20 conns']?.[3]).toMatch(/^\/healthz 6000 req\/s/);
    expect(byFigure['resident memory after the bench']?.[2]).toBe(
      'api 180 MB / 140 MB / 145 MB (cluster primary 60 MB), worker 260 MB',
    );
    expect(byFigure['resident memory after the bench']?.[4]).toBe('no');
    expect(byFigure['first webhook attempt after a sale (median)']?.slice(2)).toEqual(['41 ms', '', 'yes']);
    expect(byFigure['webhook deliveries sustained for 60 s']?.slice(2)).toEqual([
      '212.4/s; 10 of 12800 not delivered',
      '',
      'no',
    ]);
    const table = renderTable(rows).split('\n');
    expect(table[0]).toMatch(/^\| figure +\| goal +\| measured +\| baseline \(same run\) +\| met \|$/);
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
  });

  it('says which figures a failed bench could not give', () => {
    const rows = tableRows(undefined, {});
    expect(rows.map((r) => r[4])).toEqual(['?', '?', '?']);
    expect(rows[0]?.[2]).toBe('not measured (the deploy bench failed)');
  });
});
