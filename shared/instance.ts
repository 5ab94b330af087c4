import { createHash } from 'node:crypto';

import type { Config } from './config';

/**
 * The instance label of every engine object this Slipway makes. Several instances may share one engine (npm start,
 * a test run on its own FerretDB, every test file on its own task queue): a reconciler judges objects against its
 * own database, so it must never touch another's. The default names the database's server, the database and the
 * task queue; the server's credentials never reach a label (they are cut off before hashing, and only a hash shows).
 */
export function instanceId(
  cfg: Pick<Config, 'SLIPWAY_INSTANCE' | 'MONGODB_URL' | 'MONGODB_DB' | 'TEMPORAL_TASK_QUEUE'>,
): string {
  if (cfg.SLIPWAY_INSTANCE) return cfg.SLIPWAY_INSTANCE;
  const authority = cfg.MONGODB_URL.replace(/^mongodb(\+srv)?:\/\//, '').split(/[/?]/)[0] ?? '';
  const hosts = authority.slice(authority.lastIndexOf('@') + 1);
  const digest = createHash('sha256')
    .update(`${hosts}/${cfg.MONGODB_DB}/${cfg.TEMPORAL_TASK_QUEUE}`)
    .digest('hex')
    .slice(0, 16);
  return `${cfg.MONGODB_DB.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40)}-${digest}`;
}
