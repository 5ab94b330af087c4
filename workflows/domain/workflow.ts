import { condition, proxyActivities, setHandler } from '@temporalio/workflow';

import type { DomainActivities } from '@activities/domain';
import { checkDomainSignal, type DomainWorkflowInput } from '@shared/contracts/domain';

/** A DNS check is a few questions with a timeout each; a database or resolver outage is waited out by retries. */
const { checkDomain, expireDomain } = proxyActivities<DomainActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumInterval: '30 seconds' },
});

/** Router changes are one admin call or a few; a router that is down is tried again for as long as it takes. */
const { routeDomain, unrouteDomain } = proxyActivities<DomainActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumInterval: '1 minute' },
});

/**
 * One custom domain (docs/architecture.md, "Custom domains"): checks its DNS at once, then again after firstS,
 * doubling up to maxS, until it is verified (its route goes live on the edge router), its record is gone (its route
 * goes), or windowS has passed (it is marked failed; a verify starts it again). A `checkDomain` signal checks at once.
 */
export async function domainWorkflow(input: DomainWorkflowInput): Promise<void> {
  const { domainId } = input;
  let nudged = false;
  setHandler(checkDomainSignal, () => {
    nudged = true;
  });
  const deadline = Date.now() + input.windowS * 1000;
  let wait = input.firstS;
  for (;;) {
    nudged = false;
    const state = await checkDomain({ domainId });
    if (state === 'gone') {
      await unrouteDomain({ domainId });
      return;
    }
    if (state === 'verified') {
      await routeDomain({ domainId });
      // A signal that came while routing (a delete) is answered by another round; otherwise the domain is done.
      if (!nudged) return;
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      await expireDomain({ domainId });
      if (!nudged) return;
      continue;
    }
    await condition(() => nudged, Math.min(wait * 1000, left));
    wait = Math.min(wait * 2, input.maxS);
  }
}
