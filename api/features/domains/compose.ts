import { createDomainChecker } from '@shared/domains/check';
import { createDomainStore } from '@shared/domains/store';
import { createDomainVerifier } from '@shared/domains/verify';

import type { Core } from '../../core';
import type { DeploymentsContext } from '../deployments/compose';
import type { FeatureContext } from '../feature';
import { createDomainService } from './service';

export type DomainsNeeds = Pick<DeploymentsContext, 'deployments'>;

/** The domain service over its store (indexes made here) and a DNS checker through DNS_RESOLVERS. */
export async function composeDomains(core: Core, needs: DomainsNeeds) {
  const cfg = core.config;
  const store = createDomainStore(core.db);
  await store.ensureIndexes();
  const checker = createDomainChecker({
    resolvers: cfg.DNS_RESOLVERS,
    timeoutMs: cfg.DNS_TIMEOUT_MS,
    publicIps: cfg.EDGE_PUBLIC_IPS,
  });
  return {
    domains: createDomainService({
      store,
      verifier: createDomainVerifier({ store, checker }),
      deployments: needs.deployments,
      authz: core.authz,
      lock: core.lock,
      temporal: core.temporal,
      log: core.log,
      config: cfg,
    }),
    domainViewConfig: { publicIps: cfg.EDGE_PUBLIC_IPS, tlsPort: cfg.EDGE_TLS_PORT || 443 },
  };
}

export type DomainsContext = FeatureContext<DomainsNeeds & Awaited<ReturnType<typeof composeDomains>>>;
