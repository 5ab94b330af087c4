import { createGitBindingStore } from '@shared/git-bindings/store';
import { createWebhookSecretSealer } from '@shared/git-bindings/webhook-secrets';
import { createIdentityStore } from '@shared/identity/store';

import type { Core } from '../../core';
import type { DeploymentsContext } from '../deployments/compose';
import type { FeatureContext } from '../feature';
import { createHookReceiver } from './deliveries';
import { createGitService } from './service';

export type GitNeeds = Pick<DeploymentsContext, 'deployments'>;

/** Git connections and bindings over their store (made here with its indexes), and the receiver of their webhooks. */
export async function composeGit(core: Core, needs: GitNeeds) {
  const store = createGitBindingStore(core.db);
  await store.ensureIndexes();
  const sealer = createWebhookSecretSealer(core.config.SECRETS_KEY);
  return {
    git: createGitService({
      store,
      sealer,
      vault: core.vault,
      gitSource: core.gitSource,
      deployments: needs.deployments,
      projects: core.projectStore,
      authz: core.authz,
      lock: core.lock,
      quotaMultiplier: core.config.QUOTA_MULTIPLIER,
      config: core.config,
    }),
    gitHooks: createHookReceiver({
      store,
      sealer,
      identity: createIdentityStore(core.db),
      authz: core.authz,
      deployments: needs.deployments,
      audit: core.auditTrail,
      redis: core.redis,
      keyPrefix: core.config.REDIS_KEY_PREFIX,
      log: core.log,
    }),
  };
}

export type GitContext = FeatureContext<GitNeeds & Awaited<ReturnType<typeof composeGit>>>;
