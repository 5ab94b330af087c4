import http from 'node:http';

/** One HTTP GET / to the instance's port over the org network, redirects not followed. */
export interface HttpProbe {
  /** Any HTTP answer below 500 counts: the app is up, even if / is a 404. */
  ok: boolean;
  status?: number;
  latencyMs?: number;
  /** Our words: "connection refused", "timed out after 2000 ms", "not running", … */
  error?: string;
  at: string;
}

const PROBE_TIMEOUT_MS = 2000;

/**
 * One GET / to the app, redirects not followed and the body not read. Errors are reported in our words only: the
 * app is a tenant's, and nothing it sends back but a status code reaches a caller.
 */
export function httpProbe(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<HttpProbe> {
  const began = process.hrtime.bigint();
  const at = new Date().toISOString();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - began) / 1e5) / 10;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (p: Omit<HttpProbe, 'at' | 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...p, latencyMs: elapsed(), at });
    };
    const req = http.request(
      { host, port, path: '/', method: 'GET', headers: { 'user-agent': 'slipway-health' }, timeout: timeoutMs },
      (res) => {
        const status = res.statusCode ?? 0;
        settle({ ok: status > 0 && status < 500, status });
        res.destroy();
      },
    );
    req.once('timeout', () => {
      settle({ ok: false, error: `timed out after ${timeoutMs} ms` });
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      settle({
        ok: false,
        error:
          code === 'ECONNREFUSED'
            ? 'connection refused'
            : code === 'ECONNRESET'
              ? 'connection reset'
              : code.startsWith('HPE_')
                ? 'the answer was not HTTP'
                : 'no answer',
      });
    });
    req.end();
  });
}
