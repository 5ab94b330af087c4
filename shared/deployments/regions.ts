import { z } from 'zod';

import { REGION_PATTERN, REGION_RULE } from './region-name';
import { type Provider, PROVIDERS } from './types';

/** A region as requests name it (./region-name.ts). */
export const Region = z.string().max(63).regex(REGION_PATTERN, `a region name: ${REGION_RULE}`);

/** Why a cloud provider has no region, said the same way wherever it matters. */
export const NO_ADAPTER_REGIONS =
  'a cloud provider’s regions are those its credentials name, and the organisation has set none for it (PUT /platform/providers/{provider}/credentials)';

/** The regions of each cloud an organisation has credentials for (their `regions`); the others have none. */
export type CloudRegions = Partial<Record<Provider, readonly string[]>>;

/**
 * Where each provider can run for an organisation. engine_local runs on this server's own engine, so its one region
 * is the server's (ENGINE_REGION); a cloud provider's are those its credentials name (none without credentials).
 */
export function regionCatalog(engineRegion: string, cloud: CloudRegions = {}): Record<Provider, readonly string[]> {
  const catalog = Object.fromEntries(PROVIDERS.map((p) => [p, [...(cloud[p] ?? [])]])) as Record<Provider, string[]>;
  catalog.engine_local = [engineRegion];
  return catalog;
}

export const regionsOf = (provider: Provider, engineRegion: string, cloud: CloudRegions = {}): readonly string[] =>
  regionCatalog(engineRegion, cloud)[provider];

/** What `region` of `provider` lacks, as a sentence naming the regions it has (or why it has none); else undefined. */
export function regionProblem(
  provider: Provider,
  region: string,
  engineRegion: string,
  cloud: CloudRegions = {},
): string | undefined {
  const regions = regionsOf(provider, engineRegion, cloud);
  if (regions.includes(region)) return undefined;
  const where = provider === 'engine_local' ? 'on this server' : 'for this organisation';
  return regions.length
    ? `${provider} has no region ${region} ${where}; its regions: ${regions.join(', ')}`
    : `${provider} has no regions ${where} (${NO_ADAPTER_REGIONS}), so no region ${region}`;
}
