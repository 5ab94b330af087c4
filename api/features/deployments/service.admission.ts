import type { Provider } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { PLAN_POLICIES } from '@shared/plans';

import { providerAvailability } from './providers';
import type { DeploymentServiceDeps } from './service.deps';

/** What the plan lets a new deployment have: its replicas, its provider, its project, and a live-deployment slot. */
export function createAdmission(deps: Pick<DeploymentServiceDeps, 'projects' | 'quota' | 'config' | 'orgSettings'>) {
  /** Last step before the insert: takes the deployment's quota slot (atomic in Redis, see ./quota.ts). */
  async function checkPolicy(principal: Principal, provider: Provider, projectId: string | undefined, id: string) {
    const availability = providerAvailability(principal.org.plan).find((p) => p.id === provider)!;
    if (!availability.available) {
      throw new AppError('PROVIDER_NOT_ALLOWED', `Provider ${provider} is not available: ${availability.reason}.`, {
        provider,
        plan: principal.org.plan,
      });
    }
    if (projectId !== undefined && !(await deps.projects.get(principal.org._id, projectId))) {
      throw new AppError('PROJECT_NOT_FOUND', `No project ${projectId} in this organisation.`, { projectId });
    }
    const limit = PLAN_POLICIES[principal.org.plan].maxLiveDeployments * deps.config.QUOTA_MULTIPLIER;
    const { admitted, held: live } = await deps.quota.acquire(principal.org._id, id, limit);
    if (!admitted) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `The ${principal.org.plan} plan allows ${limit} live deployments; destroy one first.`,
        {
          plan: principal.org.plan,
          limit,
          live,
        },
      );
    }
  }

  /**
   * The provider a deploy runs on: the one it names, else the organisation's default; refused when the organisation
   * does not allow it (its allowedProviders), before the plan is asked.
   */
  async function providerOf(principal: Principal, asked: Provider | undefined): Promise<Provider> {
    const settings = await deps.orgSettings.of(principal.org._id);
    const provider = asked ?? settings.defaultProvider ?? 'engine_local';
    if (settings.allowedProviders && !settings.allowedProviders.includes(provider))
      throw new AppError(
        'PROVIDER_NOT_ALLOWED',
        `Provider ${provider}${asked ? '' : " (the organisation's default)"} is not among this organisation's allowed providers (${settings.allowedProviders.join(', ')}); deploy to one of those, or an owner or admin may change allowedProviders (PATCH /platform/organization).`,
        { provider, allowedProviders: settings.allowedProviders },
      );
    return provider;
  }

  /**
   * Refuses what the organisation or the plan does not allow, replicas first; once it returns (the provider the
   * deployment runs on), deployment `id` holds a quota slot.
   */
  async function admit(
    principal: Principal,
    input: { provider?: Provider | undefined; projectId?: string; replicas?: number },
    id: string,
  ): Promise<Provider> {
    const maxReplicas = PLAN_POLICIES[principal.org.plan].maxReplicas;
    if (input.replicas !== undefined && (input.replicas < 1 || input.replicas > maxReplicas))
      throw new AppError(
        'INVALID_REQUEST',
        `replicas must be a whole number from 1 to ${maxReplicas} on the ${principal.org.plan} plan.`,
        { replicas: input.replicas, maxReplicas },
      );
    const provider = await providerOf(principal, input.provider);
    await checkPolicy(principal, provider, input.projectId, id);
    return provider;
  }

  return { admit };
}
