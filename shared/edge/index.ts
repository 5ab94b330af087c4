import type { Config } from '../config';
import type { EdgeTls } from './domain-routes';
import { createEdgeRouter, type EdgeRouter } from './router';
import { type EdgeAddressing, hostPort } from './routes';

export { type EdgeTls, httpDialOf } from './domain-routes';
export type { WantedDomain } from './domains';
export {
  createEdgeRouter,
  EdgeHostTakenError,
  type EdgeRouter,
  EdgeRouterError,
  type Restored,
  type WantedRoute,
} from './router';
export {
  deploymentHost,
  deploymentUrl,
  type EdgeAddressing,
  EdgeInputError,
  type EdgeRoute,
  nameLabel,
  shortId,
  upstreamFor,
} from './routes';

/** The TLS settings are optional: a router client that never routes a domain (the sandbox's) goes without. */
type EdgeConfig = Pick<Config, 'EDGE_ADMIN_URL' | 'EDGE_DOMAIN' | 'EDGE_PORT' | 'EDGE_BIND_IP' | 'EDGE_UPSTREAMS_DIR'> &
  Partial<Pick<Config, 'EDGE_TLS_PORT' | 'EDGE_TLS_ISSUER' | 'ACME_EMAIL'>>;

/** The TLS server of custom domains the configuration describes, or none (EDGE_TLS_PORT=0). */
export function edgeTlsFromConfig(
  cfg: Pick<Config, 'EDGE_BIND_IP'> & Partial<Pick<Config, 'EDGE_TLS_PORT' | 'EDGE_TLS_ISSUER' | 'ACME_EMAIL'>>,
): EdgeTls | undefined {
  if (!cfg.EDGE_TLS_PORT) return undefined;
  return {
    listen: [hostPort(cfg.EDGE_BIND_IP, cfg.EDGE_TLS_PORT)],
    issuer: cfg.EDGE_TLS_ISSUER ?? 'internal',
    ...(cfg.ACME_EMAIL ? { acmeEmail: cfg.ACME_EMAIL } : {}),
  };
}

/** Where deployments' URLs point, from the configuration. */
export function edgeAddressing(cfg: Pick<Config, 'EDGE_DOMAIN' | 'EDGE_PORT'>): EdgeAddressing {
  return { domain: cfg.EDGE_DOMAIN, port: cfg.EDGE_PORT };
}

/** The router client the configuration describes. */
export function edgeRouterFromConfig(cfg: EdgeConfig): EdgeRouter {
  const tls = edgeTlsFromConfig(cfg);
  return createEdgeRouter({
    adminUrl: cfg.EDGE_ADMIN_URL,
    listen: [hostPort(cfg.EDGE_BIND_IP, cfg.EDGE_PORT)],
    ...(cfg.EDGE_UPSTREAMS_DIR ? { upstreamsDir: cfg.EDGE_UPSTREAMS_DIR } : {}),
    ...(tls ? { tls } : {}),
  });
}
