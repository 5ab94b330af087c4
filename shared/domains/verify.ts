import { isDuplicateKey } from '../db/mongo';
import type { DomainChecker } from './check';
import type { DomainStore } from './store';
import type { DomainCheck, DomainRecord } from './types';

export type VerifyOutcome =
  /** This domain holds the host's verified claim. */
  | 'verified'
  /** The TXT record does not hold the token (yet); the last check says what was found. */
  | 'pending'
  /** The TXT holds the token, but another organisation verified the host first. */
  | 'taken';

/**
 * One ownership check of a domain, recorded: the api's verify and the domain's workflow both run this. A domain that
 * already holds its host's claim stays verified whatever DNS says later (its route is removed by deleting the domain,
 * not by a DNS change); otherwise a TXT holding the token makes the claim, and the first claim of a host wins.
 */
export function createDomainVerifier(deps: {
  store: Pick<DomainStore, 'claims' | 'setCheck'>;
  checker: DomainChecker;
}) {
  const { store } = deps;

  return {
    async verify(d: DomainRecord): Promise<{ outcome: VerifyOutcome; check: DomainCheck }> {
      const held = await store.claims.live(d.hostname);
      const findings = await deps.checker.check(d, d.stableHost);
      const check: DomainCheck = { at: new Date(), ...findings };
      if (held?.domainId === d._id) {
        await store.setCheck(d._id, 'verified', check);
        return { outcome: 'verified', check };
      }
      if (findings.txt !== 'found') {
        await store.setCheck(d._id, 'pending', check);
        return { outcome: 'pending', check };
      }
      let holder = held;
      if (!holder) {
        try {
          await store.claims.insert({
            _id: d.hostname,
            orgId: d.orgId,
            domainId: d._id,
            deploymentId: d.deploymentId,
            at: check.at,
          });
          await store.setCheck(d._id, 'verified', check, check.at);
          return { outcome: 'verified', check };
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          holder = await store.claims.get(d.hostname);
        }
      }
      if (holder?.domainId === d._id) {
        await store.setCheck(d._id, 'verified', check);
        return { outcome: 'verified', check };
      }
      const taken = {
        ...check,
        message: `${d.hostname} is verified by another organisation; it cannot be verified here (delete this domain)`,
      };
      await store.setCheck(d._id, 'pending', taken);
      return { outcome: 'taken', check: taken };
    },
  };
}

export type DomainVerifier = ReturnType<typeof createDomainVerifier>;
