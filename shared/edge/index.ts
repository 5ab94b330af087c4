import type { Config } from '../config';
import { createEdgeRouter, type EdgeRouter } from './router';
import { type EdgeAddressing, hostPort } from './routes';

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

type EdgeConfig = Pick<Config, 'EDGE_ADMIN_URL' | 'EDGE_DOMAIN' | 'EDGE_PORT' | 'EDGE_BIND_IP' | 'EDGE_UPSTREAMS_DIR'>;

/** Where deployments' URLs point, from the configuration. */
export function edgeAddressing(cfg: Pick<Config, 'EDGE_DOMAIN' | 'EDGE_PORT'>): EdgeAddressing {
  return { domain: cfg.EDGE_DOMAIN, port: cfg.EDGE_PORT };
}

/** The router client the configuration describes. */
export function edgeRouterFromConfig(cfg: EdgeConfig): EdgeRouter {
  return createEdgeRouter({
    adminUrl: cfg.EDGE_ADMIN_URL,
    listen: [hostPort(cfg.EDGE_BIND_IP, cfg.EDGE_PORT)],
    ...(cfg.EDGE_UPSTREAMS_DIR ? { upstreamsDir: cfg.EDGE_UPSTREAMS_DIR } : {}),
  });
}
