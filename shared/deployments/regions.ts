import { z } from 'zod';

import { REGION_PATTERN, REGION_RULE } from './region-name';
import { type Provider, PROVIDERS } from './types';

/** A region as requests name it (./region-name.ts). */
export const Region = z.string().max(63).regex(REGION_PATTERN, `a region name: ${REGION_RULE}`);

/** Why a provider with no adapter on this server has no region, said the same way wherever it matters. */
export const NO_ADAPTER_REGIONS =
  'no adapter for it is configured on this server, and a cloud provider’s regions come with its adapter';

/**
 * Where each provider can run on this server. engine_local runs on this server's own engine, so its one region is the
 * server's (ENGINE_REGION); the cloud providers have no adapter here yet, so none of theirs can be chosen.
 */
export function regionCatalog(engineRegion: string): Record<Provider, readonly string[]> {
  const catalog = Object.fromEntries(PROVIDERS.map((p) => [p, [] as string[]])) as Record<Provider, string[]>;
  catalog.engine_local = [engineRegion];
  return catalog;
}

export const regionsOf = (provider: Provider, engineRegion: string): readonly string[] =>
  regionCatalog(engineRegion)[provider];

/** What `region` of `provider` lacks, as a sentence naming the regions it has (or why it has none); else undefined. */
export function regionProblem(provider: Provider, region: string, engineRegion: string): string | undefined {
  const regions = regionsOf(provider, engineRegion);
  if (regions.includes(region)) return undefined;
  return regions.length
    ? `${provider} has no region ${region} on this server; its regions: ${regions.join(', ')}`
    : `${provider} has no regions on this server (${NO_ADAPTER_REGIONS}), so no region ${region}`;
}
