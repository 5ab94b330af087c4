import { PROVIDERS } from '@shared/deployments/types';
import { PLANS } from '@shared/identity/store';
import { PLAN_POLICIES } from '@shared/plans';

describe('plan policies', () => {
  it('keep free organisations on the local engine', () => {
    expect(PLAN_POLICIES.free.providers).toEqual(['engine_local']);
  });

  it('give every plan at least what the plan below it gives', () => {
    for (let i = 1; i < PLANS.length; i++) {
      const lower = PLAN_POLICIES[PLANS[i - 1]!];
      const higher = PLAN_POLICIES[PLANS[i]!];
      expect(higher.maxLiveDeployments).toBeGreaterThanOrEqual(lower.maxLiveDeployments);
      expect(higher.maxReplicas).toBeGreaterThanOrEqual(lower.maxReplicas);
      expect(higher.limits.memoryMb).toBeGreaterThanOrEqual(lower.limits.memoryMb);
      expect(higher.limits.cpus).toBeGreaterThanOrEqual(lower.limits.cpus);
      expect(higher.limits.pids).toBeGreaterThanOrEqual(lower.limits.pids);
      for (const p of lower.providers) expect(higher.providers).toContain(p);
    }
  });

  it('name only providers that exist, and limits a container can start with', () => {
    for (const plan of PLANS) {
      const policy = PLAN_POLICIES[plan];
      for (const p of policy.providers) expect(PROVIDERS).toContain(p);
      expect(policy.maxReplicas).toBeGreaterThanOrEqual(1);
      expect(policy.maxLiveDeployments).toBeGreaterThanOrEqual(1);
      // The engine refuses less than 6 MB of memory; a process limit below a few dozen starts nothing useful.
      expect(policy.limits.memoryMb).toBeGreaterThanOrEqual(6);
      expect(policy.limits.cpus).toBeGreaterThan(0);
      expect(policy.limits.pids).toBeGreaterThanOrEqual(32);
    }
  });
});
