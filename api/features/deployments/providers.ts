import { type CloudRegions, regionCatalog } from '@shared/deployments/regions';
import { type Provider, PROVIDERS } from '@shared/deployments/types';
import type { Plan } from '@shared/identity/store';
import { PLAN_POLICIES } from '@shared/plans';

const NAMES: Record<Provider, string> = {
  engine_local: 'Local container engine (Docker Engine)',
  cloud_a_run: 'Cloud A Run',
  cloud_b_container_apps: 'Cloud B Container Apps',
  cloud_c_ecs_fargate: 'Cloud C ECS on Fargate',
};

/**
 * Each provider: whether the plan and the organisation's credentials allow it, and the regions a deploy to it may
 * name. engine_local is this server's own engine; a cloud is available once the organisation's credentials for it
 * passed their check (PUT /platform/providers/{provider}/credentials), in the regions they name.
 */
export function providerAvailability(plan: Plan, engineRegion: string, cloud: CloudRegions = {}) {
  const regions = regionCatalog(engineRegion, cloud);
  return PROVIDERS.map((id) => {
    const onPlan = PLAN_POLICIES[plan].providers.includes(id);
    const reason = !onPlan
      ? `not included in the ${plan} plan`
      : id !== 'engine_local' && !cloud[id]
        ? `the organisation has no credentials for it; an owner or admin sets them with PUT /platform/providers/${id}/credentials`
        : undefined;
    return { id, name: NAMES[id], available: !reason, ...(reason ? { reason } : {}), regions: [...regions[id]] };
  });
}
