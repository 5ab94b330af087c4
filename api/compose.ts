import type { AppParts } from './app';
import { composeCore, type Connections } from './core';
import { FEATURES } from './features';
import { composeFeatures } from './features/feature';

/**
 * Builds the api from its connections: the shared core, then every feature of features/index.ts in its order.
 * Used by server.ts, `slipway mcp` and the tests alike.
 */
export async function composeApi(c: Connections): Promise<AppParts> {
  const core = await composeCore(c);
  return { core, features: await composeFeatures(core, FEATURES) };
}
