import type { Config } from '@shared/config';

import type { CloudAdapters } from '../deployment/cloud';
import { createContainerAppsAdapter } from './cloud-container-apps';
import { createEcsAdapter } from './cloud-ecs';
import { createRunAdapter } from './cloud-run';

/**
 * The cloud adapters this worker runs, from the server's settings: every cloud is offered, and which one a deployment
 * uses is its organisation's choice (its credentials). Where each SDK talks is set here, never by a tenant.
 */
export function cloudAdaptersFrom(
  config: Pick<
    Config,
    | 'CLOUD_A_RUN_ENDPOINT'
    | 'CLOUD_A_LOGGING_ENDPOINT'
    | 'CLOUD_A_TOKEN_URL'
    | 'CLOUD_B_ARM_ENDPOINT'
    | 'CLOUD_B_LOGS_ENDPOINT'
  >,
): CloudAdapters {
  return {
    cloud_a_run: createRunAdapter(config),
    cloud_b_container_apps: createContainerAppsAdapter(config),
    cloud_c_ecs_fargate: createEcsAdapter(),
  };
}
