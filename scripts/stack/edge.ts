import fs from 'node:fs/promises';
import path from 'node:path';

import { request } from 'undici';

import { createEdgeRouter, EdgeRouterError } from '@shared/edge';
import { pkiApp, tlsAutomation } from '@shared/edge/domain-routes';
import { hostPort } from '@shared/edge/routes';

import type { Part, PartContext, PartResult } from './part';
import { configuredPort, ensurePortsFree } from './ports';
import { freePort, type Managed, startServer } from './process';
import { StackError } from './stack-error';
import { ensureTool } from './tools';

export interface CaddyOptions {
  binary: string;
  /** Its config, logs and (for later TLS) certificate storage; nothing is written under $HOME. */
  dir: string;
  adminPort: number;
  httpPort: number;
  /** Address the deployments' traffic is served on (EDGE_BIND_IP). */
  bindIp: string;
  /** The TLS server of custom domains, certificates from Caddy's local CA (its root under <dir>/storage/pki). */
  tlsPort?: number;
  signal?: AbortSignal;
}

/**
 * Runs Caddy with only its admin API configured, then has the edge client make our server block, so the HTTP
 * port is bound (and a port taken since the check fails here, in one line) before the stack says it is ready.
 * Its config is not persisted: after a restart the worker re-publishes from the deployments' records, which
 * are the truth, instead of resuming routes to containers that may be gone.
 */
export async function startCaddy(opts: CaddyOptions): Promise<{ proc: Managed; adminUrl: string }> {
  await fs.mkdir(opts.dir, { recursive: true });
  const adminUrl = `http://127.0.0.1:${opts.adminPort}`;
  const configFile = path.join(opts.dir, 'caddy.json');
  const config = {
    admin: { listen: `127.0.0.1:${opts.adminPort}`, config: { persist: false } },
    storage: { module: 'file_system', root: path.join(opts.dir, 'storage') },
    logging: { logs: { default: { level: 'WARN' } } },
    // The certificate apps of custom domains from the start: the edge client then finds them as it wants them, and
    // makes its TLS server with one config change instead of three (each a reload of the whole router).
    ...(opts.tlsPort ? { apps: { tls: { automation: tlsAutomation({ issuer: 'internal' }) }, pki: pkiApp() } } : {}),
  };
  await fs.writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
  const env = { ...process.env, XDG_DATA_HOME: opts.dir, XDG_CONFIG_HOME: opts.dir, HOME: opts.dir };
  const router = createEdgeRouter({
    adminUrl,
    listen: [hostPort(opts.bindIp, opts.httpPort)],
    // A config change on a loaded machine (the first makes the local CA's keys) takes seconds.
    timeoutMs: 15_000,
    ...(opts.tlsPort ? { tls: { listen: [hostPort(opts.bindIp, opts.tlsPort)], issuer: 'internal' as const } } : {}),
  });
  const proc = await startServer(
    'the edge router (Caddy)',
    ['caddy', opts.binary, ['run', '--config', configFile], { logFile: path.join(opts.dir, 'caddy.log'), env }],
    async () => (await request(`${adminUrl}/config/`, { headersTimeout: 1000 })).statusCode === 200,
    // One line for the console, with Caddy's own reason: here the reader is the operator, not a tenant.
    () =>
      router.ensureServer().catch((err: unknown) => {
        const detail = err instanceof EdgeRouterError && err.detail ? ` (${err.detail})` : '';
        throw new StackError(
          `${err instanceof Error ? err.message.replace(/; see the worker log$/, '') : err}${detail}`,
        );
      }),
    opts.signal,
  );
  return { proc, adminUrl };
}

/**
 * The edge router (docs/architecture.md, "Edge router"): Caddy, built from its Go module and cached like the other
 * servers.
 */
export const edge: Part = {
  name: 'caddy',
  async start(ctx: PartContext): Promise<PartResult> {
    if (process.env.EDGE_ADMIN_URL) return { env: {}, started: [], external: true };
    const wanted = {
      http: { port: 8088, part: 'the edge router', variable: 'EDGE_PORT' },
      admin: { port: 2019, part: "the edge router's admin API", variable: 'SLIPWAY_EDGE_ADMIN_PORT' },
      tls: { port: 8443, part: "the edge router's HTTPS for custom domains", variable: 'EDGE_TLS_PORT' },
    };
    let http: number, admin: number, tls: number;
    if (ctx.ports === 'free') {
      // Each drawn and released in turn: the system may hand the same one out twice, which two listeners cannot share.
      const drawn = new Set<number>();
      while (drawn.size < 3) drawn.add(await freePort());
      [http, admin, tls] = [...drawn] as [number, number, number];
    } else {
      const claims = Object.values(wanted).map((c) => ({ ...c, port: configuredPort(c.variable, c.port) }));
      await ensurePortsFree(claims);
      [http, admin, tls] = claims.map((c) => c.port) as [number, number, number];
    }
    ctx.progress('looking for caddy in the tool cache');
    const { binary } = await ensureTool('caddy', { signal: ctx.signal, progress: ctx.progress });
    ctx.progress('starting Caddy');
    // Loopback unless EDGE_BIND_IP says otherwise; the worker's config (shared/config.ts) reads the same variable.
    const bindIp = process.env.EDGE_BIND_IP || '127.0.0.1';
    const dir = path.join(ctx.dataDir, 'caddy');
    const { proc, adminUrl } = await startCaddy({
      binary,
      dir,
      adminPort: admin,
      httpPort: http,
      bindIp,
      tlsPort: tls,
      signal: ctx.signal,
    });
    const domain = process.env.EDGE_DOMAIN || 'localhost';
    // Beside Caddy's own files and read by it as the same user: routes read their upstreams there at each request
    // (shared/edge/upstream-files.ts), so a release switch is a file written, not a config reload.
    const upstreams = process.env.EDGE_UPSTREAMS_DIR ?? path.join(dir, 'upstreams');
    return {
      env: {
        EDGE_ADMIN_URL: adminUrl,
        EDGE_PORT: String(http),
        EDGE_UPSTREAMS_DIR: upstreams,
        EDGE_TLS_PORT: String(tls),
        EDGE_TLS_ISSUER: 'internal',
      },
      urls: {
        Deployments: `http://<name>-<id>.${domain}:${http}`,
        'Custom domains': `https://<your domain>:${tls} (local CA root: ${path.join(dir, 'storage', 'pki', 'authorities', 'local', 'root.crt')})`,
      },
      started: [proc],
      external: false,
    };
  },
};
