import { type CloudProvider, isCloudProvider } from '@shared/cloud/credentials';
import { type CloudRegions, regionProblem, regionsOf } from '@shared/deployments/regions';
import type { DeploymentSource, Provider } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { OrgSettings } from '@shared/org-settings/types';
import { PLAN_POLICIES } from '@shared/plans';

import { providerAvailability } from './providers';
import type { DeploymentServiceDeps } from './service.deps';

/** What the plan lets a new deployment have: its replicas, its provider, its project, and a live-deployment slot. */
export function createAdmission(
  deps: Pick<DeploymentServiceDeps, 'projects' | 'quota' | 'config' | 'orgSettings' | 'cloudCredentials'>,
) {
  const engineRegion = deps.config.ENGINE_REGION;

  /** A provider the plan does not offer, or this server cannot run, is refused before its region is looked at. */
  function checkAvailable(principal: Principal, provider: Provider, cloud: CloudRegions) {
    const availability = providerAvailability(principal.org.plan, engineRegion, cloud).find((p) => p.id === provider)!;
    if (!availability.available) {
      throw new AppError('PROVIDER_NOT_ALLOWED', `Provider ${provider} is not available: ${availability.reason}.`, {
        provider,
        plan: principal.org.plan,
      });
    }
  }

  /**
   * The region a deploy runs in: the one it names, else the organisation's defaultRegion when the provider is its
   * default provider, else the provider's first. A region the provider does not have is refused (400) naming its
   * regions; so is a stored defaultRegion the provider no longer has (ENGINE_REGION changed since it was set).
   */
  function regionOf(
    settings: Pick<OrgSettings, 'defaultProvider' | 'defaultRegion'>,
    provider: Provider,
    asked: string | undefined,
    cloud: CloudRegions,
  ): string | undefined {
    if (asked !== undefined) {
      const problem = regionProblem(provider, asked, engineRegion, cloud);
      if (problem)
        throw new AppError(
          'INVALID_REQUEST',
          `region: ${problem}. Name one of its regions, or leave region out for the default (GET /compat/providers lists each provider's regions).`,
          { provider, region: asked, regions: regionsOf(provider, engineRegion, cloud) },
        );
      return asked;
    }
    const stored = settings.defaultRegion;
    if (stored !== null && provider === (settings.defaultProvider ?? 'engine_local')) {
      const problem = regionProblem(provider, stored, engineRegion, cloud);
      if (problem)
        throw new AppError(
          'INVALID_REQUEST',
          `The organisation's defaultRegion ${stored} is not available: ${problem}. Name a region in the deploy, or an owner or admin may change defaultRegion (PATCH /platform/organization).`,
          { provider, defaultRegion: stored, regions: regionsOf(provider, engineRegion, cloud) },
        );
      return stored;
    }
    return regionsOf(provider, engineRegion, cloud)[0];
  }

  /**
   * What a cloud cannot take: volumes (they are this server's engine's disks), and a source to build without a
   * registry in the credentials to push the build to (the cloud pulls the image from there).
   */
  async function checkCloud(
    principal: Principal,
    provider: CloudProvider,
    input: { volumes?: unknown[] | undefined; sourceType?: DeploymentSource['type'] },
  ) {
    if (input.volumes?.length)
      throw new AppError(
        'INVALID_REQUEST',
        `volumes: volumes are disks of this server's engine, so a deployment on ${provider} cannot mount them; deploy to engine_local, or keep the data in a database or bucket the app reaches over the network.`,
        { provider },
      );
    if (input.sourceType && input.sourceType !== 'image') {
      const summary = await deps.cloudCredentials.summary(principal.org._id, provider);
      if (!summary?.registry)
        throw new AppError(
          'INVALID_REQUEST',
          `A source deploy to ${provider} is built here and pushed to a registry the cloud pulls from, and the organisation's ${provider} credentials name none: add "registry": {"repository": "host/path"} with PUT /platform/providers/${provider}/credentials, or deploy an image.`,
          { provider },
        );
    }
  }

  /** Last step before the insert: takes the deployment's quota slot (atomic in Redis, see ./quota.ts). */
  async function checkPolicy(principal: Principal, projectId: string | undefined, id: string) {
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
  function providerOf(
    principal: Principal,
    settings: Pick<OrgSettings, 'defaultProvider' | 'allowedProviders'>,
    asked: Provider | undefined,
  ): Provider {
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
   * Refuses what the organisation or the plan does not allow, replicas first; once it returns (the provider and region
   * the deployment runs on; no region only for a provider this server cannot run, which is refused before), deployment
   * `id` holds a quota slot.
   */
  async function admit(
    principal: Principal,
    input: {
      provider?: Provider | undefined;
      region?: string | undefined;
      projectId?: string;
      replicas?: number;
      volumes?: unknown[] | undefined;
      sourceType?: DeploymentSource['type'];
    },
    id: string,
  ): Promise<{ provider: Provider; region: string | undefined }> {
    const maxReplicas = PLAN_POLICIES[principal.org.plan].maxReplicas;
    if (input.replicas !== undefined && (input.replicas < 1 || input.replicas > maxReplicas))
      throw new AppError(
        'INVALID_REQUEST',
        `replicas must be a whole number from 1 to ${maxReplicas} on the ${principal.org.plan} plan.`,
        { replicas: input.replicas, maxReplicas },
      );
    const [settings, cloud] = await Promise.all([
      deps.orgSettings.of(principal.org._id),
      deps.cloudCredentials.regions(principal.org._id),
    ]);
    const provider = providerOf(principal, settings, input.provider);
    checkAvailable(principal, provider, cloud);
    const region = regionOf(settings, provider, input.region, cloud);
    if (isCloudProvider(provider)) await checkCloud(principal, provider, input);
    await checkPolicy(principal, input.projectId, id);
    return { provider, region };
  }

  return { admit };
}
