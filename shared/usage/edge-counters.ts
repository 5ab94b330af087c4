import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';

/**
 * Requests and bytes through the edge router, per host. Caddy counts them itself when `apps.http.metrics.per_host`
 * is on (shared/edge/metrics.ts), and its admin API's `/metrics` shows the counters in Prometheus' text format. The
 * metrics schedule reads them into immutable `edge_readings` (cumulative values as read, with the deployment each host
 * belonged to then); the usage roll-up turns consecutive readings into deltas (readingDeltas). Counters restart at
 * zero when Caddy restarts and also at every configuration reload (its http app, metrics included, is made anew):
 * a changed process start or reload time, or a counter that went down, is read as a restart. What was served between
 * the last reading and a reload is not counted (at most one sampling interval's traffic of each host).
 */
export interface HostCounters {
  requests: number;
  /** Request sizes as Caddy estimates them: the request line, headers and body. */
  requestBytes: number;
  /** Response bodies as written to the client. */
  responseBytes: number;
}

export interface ScrapedCounters {
  /**
   * Caddy's `process_start_time_seconds` and `caddy_config_last_reload_success_timestamp_seconds`: a different value
   * means the counters began again from zero.
   */
  epoch: string | null;
  hosts: Map<string, HostCounters>;
}

const SERIES = {
  caddy_http_requests_total: 'requests',
  caddy_http_request_size_bytes_sum: 'requestBytes',
  caddy_http_response_size_bytes_sum: 'responseBytes',
} as const satisfies Record<string, keyof HostCounters>;

const RELOADED = 'caddy_config_last_reload_success_timestamp_seconds';
const LINE = /^([a-z_]+)\{(.*)\} (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function labelsOf(text: string): Map<string, string> {
  const labels = new Map<string, string>();
  for (const m of text.matchAll(LABEL))
    labels.set(
      m[1]!,
      m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)),
    );
  return labels;
}

/**
 * The three per-host series of one server (ours, by its name under apps.http.servers) and the epoch, from Caddy's
 * `/metrics` text; every other line is skipped. The host label is the Host header as sent, with the port when the
 * router listens on another than 80 or 443: the port is dropped, so `web-x.localhost:8088` and `web-x.localhost` are
 * one host. Caddy's `_other` (hosts it does not count one by one) is left out: it belongs to no deployment. Caddy
 * counts a request once per handler of the route's own list, not the handlers nested in a `subroute`, and each of our
 * routes has exactly one (a proxy, or a subroute holding the proxy and the stopped page), so the series of a host add
 * up to its requests whatever handler they name.
 */
export function parseCaddyMetrics(text: string, serverName: string): ScrapedCounters {
  const hosts = new Map<string, HostCounters>();
  const times: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const [name, time] = line.split(' ');
    if ((name === 'process_start_time_seconds' || name === RELOADED) && time) {
      times[name] = time;
      continue;
    }
    const m = LINE.exec(line);
    if (!m || !(m[1]! in SERIES)) continue;
    const field = SERIES[m[1] as keyof typeof SERIES];
    const labels = labelsOf(m[2]!);
    const host = labels.get('host')?.replace(/:\d+$/, '');
    if (labels.get('server') !== serverName || !host || host === '_other') continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    const counters = hosts.get(host) ?? { requests: 0, requestBytes: 0, responseBytes: 0 };
    counters[field] += value;
    hosts.set(host, counters);
  }
  const epoch = Object.keys(times).length
    ? `${times.process_start_time_seconds ?? '-'}/${times[RELOADED] ?? '-'}`
    : null;
  return { epoch, hosts };
}

/** One host in a reading: its cumulative counters and the deployment whose route held it when read (if any). */
export interface ReadingHost extends HostCounters {
  host: string;
  deploymentId: string | null;
}

/** One read of a router's counters, inserted once (`<edge>|<at ms>`), swept with the metrics samples. */
export interface EdgeReading {
  _id: string;
  /** Which router: its admin address. Readings of one router are consecutive; another's start their own chain. */
  edge: string;
  at: Date;
  epoch: string | null;
  hosts: ReadingHost[];
}

export interface HostDelta extends HostCounters {
  host: string;
  deploymentId: string | null;
}

/**
 * What happened between two consecutive readings of one router, per host. A host the earlier reading lacked began
 * counting after it (Caddy makes a host's series at its first request); a restart (another epoch, or any counter
 * lower than before) began every counter again from zero, so the later value is all new. Without an earlier
 * reading at all the later one is only a baseline: what its counters hold may have been counted by readings since
 * swept, so nothing is counted rather than counting it twice.
 */
export function readingDeltas(prev: EdgeReading | undefined, cur: EdgeReading): HostDelta[] {
  if (!prev) return [];
  const before = new Map(prev.hosts.map((h) => [h.host, h]));
  const restarted = prev.epoch !== null && cur.epoch !== null && prev.epoch !== cur.epoch;
  const out: HostDelta[] = [];
  for (const h of cur.hosts) {
    const p = restarted ? undefined : before.get(h.host);
    const wentDown =
      p !== undefined &&
      (h.requests < p.requests || h.requestBytes < p.requestBytes || h.responseBytes < p.responseBytes);
    const base = p && !wentDown ? p : { requests: 0, requestBytes: 0, responseBytes: 0 };
    const delta = {
      host: h.host,
      // The route may have gone between the readings (a destroy): the earlier reading still says whose it was.
      deploymentId: h.deploymentId ?? p?.deploymentId ?? before.get(h.host)?.deploymentId ?? null,
      requests: h.requests - base.requests,
      requestBytes: h.requestBytes - base.requestBytes,
      responseBytes: h.responseBytes - base.responseBytes,
    };
    if (delta.requests || delta.requestBytes || delta.responseBytes) out.push(delta);
  }
  return out;
}

export function createEdgeReadings(db: Db) {
  const col = db.collection<EdgeReading>('edge_readings');
  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('edgeReadings.createIndexes', async () => {
        await col.createIndex({ edge: 1, at: 1 });
        await col.createIndex({ at: 1 });
      });
    },

    async insert(reading: EdgeReading): Promise<void> {
      await guard('edgeReadings.insert', () => col.insertOne(reading)).catch((err: unknown) => {
        // The same router read at the same millisecond by another worker: one reading of it stands.
        if (!isDuplicateKey(err)) throw err;
      });
    },

    /** Every router's readings in [from, to), and each router's last reading before `from` (their deltas' bases). */
    async around(from: Date, to: Date): Promise<EdgeReading[]> {
      const within = await guard('edgeReadings.within', () =>
        col
          .find({ at: { $gte: from, $lt: to } })
          .sort({ at: 1, _id: 1 })
          .toArray(),
      );
      const edges = [...new Set(within.map((r) => r.edge))];
      const bases = await Promise.all(
        edges.map((edge) =>
          guard('edgeReadings.base', () =>
            col
              .find({ edge, at: { $lt: from } })
              .sort({ at: -1 })
              .limit(1)
              .toArray(),
          ),
        ),
      );
      return [...bases.flat(), ...within];
    },

    /** Deletes readings older than `before`, as the metrics sweep does samples. */
    async sweep(before: Date): Promise<number> {
      return (await guard('edgeReadings.sweep', () => col.deleteMany({ at: { $lt: before } }))).deletedCount;
    },
  };
}

export type EdgeReadings = ReturnType<typeof createEdgeReadings>;

/** Deltas per host between each router's consecutive readings, each dated by the later reading. */
export function deltasOf(readings: readonly EdgeReading[]): (HostDelta & { at: Date })[] {
  const byEdge = new Map<string, EdgeReading[]>();
  for (const r of readings) byEdge.set(r.edge, [...(byEdge.get(r.edge) ?? []), r]);
  const out: (HostDelta & { at: Date })[] = [];
  for (const chain of byEdge.values()) {
    chain.sort((a, b) => a.at.getTime() - b.at.getTime());
    for (let i = 1; i < chain.length; i++)
      for (const d of readingDeltas(chain[i - 1], chain[i]!)) out.push({ ...d, at: chain[i]!.at });
  }
  return out;
}
