import { regionCatalog } from '@shared/deployments/regions';
import { type Provider, PROVIDERS } from '@shared/deployments/types';
import type { Plan } from '@shared/identity/store';
import { PLAN_POLICIES } from '@shared/plans';

const NAMES: Record<Provider, string> = {
  engine_local: 'Local container engine (Docker Engine)',
  cloud_a_run: 'Cloud A Run',
  cloud_b_container_apps: 'Cloud B Container Apps',
  cloud_c_ecs_fargate: 'Cloud C ECS on Fargate',
};

/** Cloud adapters need credentials and an adapter this server does not ship yet, so only engine_local can be available. */
const CONFIGURED: ReadonlySet<Provider> = new Set(['engine_local']);

/** Each provider: whether the plan and this server allow it, and the regions a deploy to it may name. */
export function providerAvailability(plan: Plan, engineRegion: string) {
  const regions = regionCatalog(engineRegion);
  return PROVIDERS.map((id) => {
    const onPlan = PLAN_POLICIES[plan].providers.includes(id);
    const reason = !onPlan
      ? `not included in the ${plan} plan`
      : !CONFIGURED.has(id)
        ? 'no credentials are configured for it on this server'
        : undefined;
    return { id, name: NAMES[id], available: !reason, ...(reason ? { reason } : {}), regions: [...regions[id]] };
  });
}
