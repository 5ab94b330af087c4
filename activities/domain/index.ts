import { log } from '@temporalio/activity';

import type { DomainCheckState } from '@shared/contracts/domain';
import type { DomainStore } from '@shared/domains/store';
import type { DomainVerifier } from '@shared/domains/verify';
import type { EdgeRouter } from '@shared/edge';

/**
 * The domain workflow's steps (workflows/domain/workflow.ts): a check recorded on the domain, its route put on the
 * edge router or taken off, and the end of the checking window.
 */
export function createDomainActivities(deps: {
  store: Pick<DomainStore, 'getAny' | 'setRouted' | 'setStatus'>;
  verifier: DomainVerifier;
  router: Pick<EdgeRouter, 'publishDomain' | 'unpublishDomain'>;
}) {
  const { store } = deps;
  return {
    async checkDomain(input: { domainId: string }): Promise<DomainCheckState> {
      const d = await store.getAny(input.domainId);
      if (!d) return 'gone';
      const { outcome } = await deps.verifier.verify(d);
      return outcome === 'verified' ? 'verified' : 'pending';
    },

    /** The verified domain's route; a record deleted meanwhile takes it off again, so a delete never leaves one. */
    async routeDomain(input: { domainId: string }): Promise<void> {
      const d = await store.getAny(input.domainId);
      if (!d || d.status !== 'verified') return;
      await deps.router.publishDomain(d._id, d.hostname, d.stableHost);
      await store.setRouted(d._id, new Date());
      if (!(await store.getAny(input.domainId))) {
        log.info('a domain was deleted while its route was added; removing it', { domainId: input.domainId });
        await deps.router.unpublishDomain(input.domainId);
      }
    },

    async unrouteDomain(input: { domainId: string }): Promise<void> {
      await deps.router.unpublishDomain(input.domainId);
    },

    /** Checked for the whole window without the TXT record: failed until the owner verifies again. */
    async expireDomain(input: { domainId: string }): Promise<void> {
      const d = await store.getAny(input.domainId);
      if (d && d.status === 'pending') await store.setStatus(d._id, 'failed');
    },
  };
}

export type DomainActivities = ReturnType<typeof createDomainActivities>;
