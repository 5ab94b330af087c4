import 'uplot/dist/uPlot.min.css';

import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

import { useApi } from '../../api/hooks';
import { Empty, ErrorNote, Loading } from '../../ui';

interface History {
  series: { instance: string; points: { at: string; cpuPercent: number; memoryBytes: number }[] }[];
}

/** The last hour of CPU use per instance, as a chart (uplot, loaded with this component only). */
export default function MetricsChart({ id }: { id: string }) {
  const history = useApi<History>(`/platform/deployments/${id}/container-metrics/history?step=60`);
  const box = useRef<HTMLDivElement>(null);
  const series = history.data?.series ?? [];
  useEffect(() => {
    if (!box.current || series.length === 0) return;
    const times = [...new Set(series.flatMap((s) => s.points.map((p) => Date.parse(p.at) / 1000)))].sort();
    const data: uPlot.AlignedData = [
      times,
      ...series.map((s) => {
        const by = new Map(s.points.map((p) => [Date.parse(p.at) / 1000, p.cpuPercent]));
        return times.map((t) => by.get(t) ?? null);
      }),
    ];
    const plot = new uPlot(
      {
        width: Math.min(720, box.current.clientWidth || 720),
        height: 220,
        series: [
          {},
          ...series.map((s, i) => ({ label: `${s.instance} CPU %`, stroke: i % 2 ? '#8a3ffc' : '#0f62fe' })),
        ],
      },
      data,
      box.current,
    );
    return () => plot.destroy();
  }, [series]);
  if (history.isPending) return <Loading what="Loading resource use" />;
  if (history.error) return <ErrorNote error={history.error} />;
  if (series.length === 0)
    return <Empty>No samples yet: resource use is recorded every 15 s while instances run.</Empty>;
  return (
    <figure>
      <div ref={box} role="img" aria-label="CPU use per instance over the last hour" />
      <figcaption>CPU use per instance, last hour (percent of one CPU).</figcaption>
    </figure>
  );
}
