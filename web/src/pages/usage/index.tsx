// uPlot is imported here only, so it stays in this page's chunk and out of the first load.
import 'uplot/dist/uPlot.min.css';

import { useEffect, useId, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';

import { qs } from '../../api/client';
import { useApi } from '../../api/hooks';
import { DataTable, Empty, ErrorNote, Loading, Page, Section, SelectField } from '../../ui';

/** The shapes of api/features/usage/schemas.ts, as the console reads them. */
interface Figure {
  value: number;
  unit: string;
  limit: number | null;
}
type Metric =
  | 'cpuSeconds'
  | 'memoryGbHours'
  | 'buildMinutes'
  | 'requests'
  | 'requestBytes'
  | 'responseBytes'
  | 'aiInputTokens'
  | 'aiOutputTokens'
  | 'volumeGbHours'
  | 'databaseGbHours'
  | 'backupGbHours'
  | 'bucketGbHours';
type Figures = Record<Metric, Figure>;
interface Usage {
  from: string;
  to: string;
  groupBy: 'day' | 'hour';
  plan: string;
  total: Figures;
  groups: Array<{ key: string | null; usage: Figures }>;
  hours: { rolledUp: number; live: number };
}

const LABELS: Record<Metric, string> = {
  cpuSeconds: 'CPU time',
  memoryGbHours: 'Memory',
  buildMinutes: 'Build time',
  requests: 'Requests',
  requestBytes: 'Request bytes',
  responseBytes: 'Response bytes',
  aiInputTokens: 'AI input tokens',
  aiOutputTokens: 'AI output tokens',
  volumeGbHours: 'Volume storage',
  databaseGbHours: 'Database storage',
  backupGbHours: 'Backup storage',
  bucketGbHours: 'Bucket storage',
};

/** The charts: each a few metrics of one kind, so a chart's series share a unit. */
const CHARTS: Array<{ title: string; metrics: Metric[] }> = [
  { title: 'Compute', metrics: ['cpuSeconds', 'buildMinutes'] },
  {
    title: 'Memory and storage (GiB × hours)',
    metrics: ['memoryGbHours', 'volumeGbHours', 'databaseGbHours', 'bucketGbHours'],
  },
  { title: 'Requests', metrics: ['requests'] },
  { title: 'AI tokens', metrics: ['aiInputTokens', 'aiOutputTokens'] },
];
const COLOURS = ['#1d4ed8', '#b42318', '#085d3a', '#7a2e0e'];

/**
 * The periods offered: up to a month per hour (the api's hourly cut covers at most 31 days), longer ones per day.
 * `from` is computed once per choice, so the query's key (its path) stays put and nothing is fetched twice.
 */
const RANGES = [
  {
    value: '24h',
    label: 'Last 24 hours',
    groupBy: 'hour',
    from: () => new Date(Date.now() - 24 * 3_600_000).toISOString(),
  },
  { value: '7', label: 'Last 7 days', groupBy: 'hour', from: () => daysAgo(7) },
  { value: 'month', label: 'This month so far', groupBy: 'hour', from: () => undefined },
  { value: '30', label: 'Last 30 days', groupBy: 'hour', from: () => daysAgo(30) },
  { value: '90', label: 'Last 90 days', groupBy: 'day', from: () => daysAgo(90) },
] as const;

/** A UTC date `days` before today (the api counts usage per UTC hour and takes UTC dates). */
function daysAgo(days: number): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() - days);
  return d.toISOString().slice(0, 10);
}

/** A group's key as a chart's x: an hour's start (an instant) or a day (its UTC midnight), in seconds. */
const xOf = (key: string) => Date.parse(key.length === 10 ? `${key}T00:00:00Z` : key) / 1000;

const number = (v: number) => v.toLocaleString(undefined, { maximumFractionDigits: 3 });

export default function UsagePage() {
  const [range, setRange] = useState<string>('month');
  const path = useMemo(() => {
    const r = RANGES.find((x) => x.value === range) ?? RANGES[2];
    return `/platform/usage${qs({ groupBy: r.groupBy, from: r.from() })}`;
  }, [range]);
  const usage = useApi<Usage>(path);
  const u = usage.data;
  return (
    <Page title="Usage">
      <SelectField
        label="Period"
        value={range}
        onChange={(e) => setRange(e.target.value)}
        options={RANGES.map((r) => ({ value: r.value, label: r.label }))}
      />
      {usage.isPending && <Loading what="Loading usage" />}
      <ErrorNote error={usage.error} />
      {u && (
        <>
          <p className="muted">
            From {u.from} to {u.to} (UTC), plan {u.plan}; per UTC {u.groupBy === 'hour' ? 'hour' : 'day'}.
          </p>
          {u.groups.length === 0 ? (
            <Empty>
              No usage in this period yet: deployments, builds, storage and AI builder turns are counted hourly.
            </Empty>
          ) : (
            <div className="usage-charts">
              {CHARTS.map((c) => (
                <Chart key={c.title} title={c.title} metrics={c.metrics} usage={u} />
              ))}
            </div>
          )}
          <Section title="Totals">
            <DataTable
              caption="Usage totals over the period"
              rows={Object.keys(LABELS) as Metric[]}
              rowKey={(m) => m}
              columns={[
                { header: 'Metric', cell: (m) => LABELS[m] },
                { header: 'Amount', cell: (m) => number(u.total[m].value) },
                { header: 'Unit', cell: (m) => u.total[m].unit },
                { header: 'Plan limit', cell: (m) => (u.total[m].limit === null ? '—' : number(u.total[m].limit!)) },
              ]}
            />
          </Section>
        </>
      )}
    </Page>
  );
}

/** One uPlot chart of some metrics per hour or day; the numbers are also in the totals table for those who cannot see it. */
function Chart({ title, metrics, usage }: { title: string; metrics: Metric[]; usage: Usage }) {
  const box = useRef<HTMLDivElement>(null);
  const id = useId();
  // The api lists only hours or days with usage: every slot of the period is drawn, those without at zero.
  const { slots, byX } = useMemo(() => {
    const step = usage.groupBy === 'hour' ? 3600 : 86_400;
    const start = Date.parse(usage.from) / 1000;
    const first = step === 3600 ? start : start - (start % step);
    const all: number[] = [];
    for (let x = first; x < Date.parse(usage.to) / 1000; x += step) all.push(x);
    const m = new Map<number, Figures>();
    for (const g of usage.groups) if (g.key !== null) m.set(xOf(g.key), g.usage);
    return { slots: all, byX: m };
  }, [usage]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [slots, ...metrics.map((m) => slots.map((x) => byX.get(x)?.[m].value ?? 0))];
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth || 480),
        height: 220,
        // The legend is ours (below), in plain text: uPlot's own is a table of clickable rows.
        legend: { show: false },
        series: [
          {},
          ...metrics.map((m, i) => ({
            label: `${LABELS[m]} (${usage.total[m].unit})`,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
          })),
        ],
        axes: [{}, { size: 70 }],
      },
      data,
      el,
    );
    return () => plot.destroy();
  }, [metrics, slots, byX]);
  return (
    <figure className="card usage-chart" aria-labelledby={id}>
      <figcaption id={id}>
        <h2>{title}</h2>
      </figcaption>
      <div
        ref={box}
        role="img"
        aria-label={`${title} per ${usage.groupBy}: ${metrics.map((m) => `${LABELS[m]} ${number(usage.total[m].value)} ${usage.total[m].unit} in total`).join('; ')}`}
      />
      <ul className="usage-legend">
        {metrics.map((m, i) => (
          <li key={m}>
            <span className="usage-swatch" style={{ background: COLOURS[i % COLOURS.length] }} aria-hidden="true" />
            {LABELS[m]} ({usage.total[m].unit})
          </li>
        ))}
      </ul>
    </figure>
  );
}
