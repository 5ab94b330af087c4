import type { createAdminClient } from './admin';

/**
 * Counting per host (usage, shared/usage/edge-counters.ts): Caddy counts requests and bytes per host once
 * `apps.http.metrics.per_host` is on, but only hosts its routes name, compared with the Host header as sent. On a port
 * other than 80 or 443 that header carries the port and never matches, so there every host is counted
 * (`observe_catchall_hosts`), at the price of a series per Host value a client sends until the next reload.
 */
export function createHostMetrics(
  admin: ReturnType<typeof createAdminClient>,
  opts: { listen: string[]; serverName: string },
) {
  const { call, get, refused } = admin;
  return {
    /** Turns the counting on; set only when it differs, since every config change reloads the router. */
    async ensureHostMetrics(): Promise<void> {
      const current = await get<Record<string, unknown>>('/config/apps/http/metrics');
      const catchAll = opts.listen.some((l) => !/:(80|443)$/.test(l));
      if (current?.per_host === true && (current.observe_catchall_hosts === true) === catchAll) return;
      const { observe_catchall_hosts: _, ...rest } = current ?? {};
      const wanted = { ...rest, per_host: true, ...(catchAll ? { observe_catchall_hosts: true } : {}) };
      const answer = await call('POST', '/config/apps/http/metrics', wanted);
      if (answer.status !== 200) throw refused('count requests per host', answer);
    },

    /** The router's counters in Prometheus' text format, and the name our series carry as `server`. */
    async counters(): Promise<{ text: string; server: string }> {
      const answer = await call('GET', '/metrics');
      if (answer.status !== 200) throw refused('show its metrics', answer);
      return { text: answer.body, server: opts.serverName };
    },
  };
}
