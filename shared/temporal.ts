import { Connection } from '@temporalio/client';

import type { Config } from './config';

export function connectTemporal(cfg: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_API_KEY' | 'TEMPORAL_TLS'>) {
  return Connection.connect({
    address: cfg.TEMPORAL_ADDRESS,
    tls: cfg.TEMPORAL_TLS || Boolean(cfg.TEMPORAL_API_KEY),
    apiKey: cfg.TEMPORAL_API_KEY,
  });
}
