import { randomUUID } from 'node:crypto';

import type { TestWorkflowEnvironment } from '@temporalio/testing';

import { domainWorkflowId } from '@shared/contracts/domain';
import { createDeploymentStore } from '@shared/deployments/store';
import type { DeploymentRecord } from '@shared/deployments/types';

import { client } from '../helpers/client';
import { startDnsServer } from '../helpers/dns-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { startTimeSkipping } from '../helpers/time-skipping';

const HOUR_S = 3600;

/**
 * The domain workflow's whole default window (72 hours) on Temporal's time-skipping test server: the api and the
 * worker run as in production against a DNS server that never holds the TXT record, and the test moves workflow
 * time forward itself.
 */
describe('a custom domain that is never verified', () => {
  let env: TestWorkflowEnvironment;
  let h: Harness;
  let dns: Awaited<ReturnType<typeof startDnsServer>>;
  beforeAll(async () => {
    env = await startTimeSkipping();
    dns = await startDnsServer();
    h = await startHarness('domain-expiry', {
      TEMPORAL_ADDRESS: env.address,
      DNS_RESOLVERS: dns.address,
      DNS_TIMEOUT_MS: '1000',
    });
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await env?.teardown();
    await dns?.close();
  });

  it('is checked at once, then after 1 min doubling to an hour, for 72 hours, then failed; verify starts again', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    // A deployment's record is all a domain needs: written as a deploy writes it, without running one (the
    // time-skipping server has none of the search attributes a deployment's workflow sets).
    const deploymentId = randomUUID();
    const now = new Date();
    await createDeploymentStore(h.db).insert({
      _id: deploymentId,
      orgId: org.orgId,
      createdBy: org.userId,
      origin: 'platform',
      name: 'exp',
      provider: 'engine_local',
      source: { type: 'image', image: 'slipway-test/none:1' },
      port: 8080,
      revision: 1,
      status: 'failed',
      version: 1,
      events: [],
      createdAt: now,
      updatedAt: now,
    } as DeploymentRecord);
    const created = await api.post<{ data: { id: string } }>('/platform/domains', {
      hostname: 'www.never-verified.example.test',
      deploymentId,
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const status = async () =>
      (await api.get<{ data: { status: string } }>(`/platform/domains/${id}`)).body.data.status;
    const handle = h.temporal.workflow.getHandle(domainWorkflowId(id));

    await env.sleep(71 * HOUR_S * 1000);
    expect(await status()).toBe('pending');
    await env.sleep(2 * HOUR_S * 1000);
    await eventually(async () => ((await status()) === 'failed' ? true : undefined), 'the domain to be failed');
    await handle.result();

    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.flatMap((e) => {
      const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
      return name ? [{ name, at: Number(e.eventTime!.seconds) }] : [];
    });
    const checks = scheduled.filter((s) => s.name === 'checkDomain').map((s) => s.at);
    const gaps = checks.slice(1).map((at, i) => at - checks[i]!);
    // 1, 2, 4, … 32 minutes, then hourly; each gap the wait plus the check's own (real) seconds.
    expect(gaps.slice(0, 7).map((g) => Math.round(g / 60))).toEqual([1, 2, 4, 8, 16, 32, 60]);
    // Hourly to the end of the window; the last wait is what was left of it.
    expect(gaps.slice(7, -1).every((g) => Math.round(g / 60) === 60)).toBe(true);
    expect(gaps.at(-1)!).toBeLessThanOrEqual(HOUR_S + 60);
    expect(checks.at(-1)! - checks[0]!).toBeLessThanOrEqual(72 * HOUR_S + 60);
    expect(checks.at(-1)! - checks[0]!).toBeGreaterThan(71 * HOUR_S);
    expect(scheduled.at(-1)!.name).toBe('expireDomain');

    // A verify checks again at once and starts the background checks anew.
    const again = await api.post<{ data: { status: string; lastCheck: { txt: string } } }>(
      `/platform/domains/${id}/verify`,
    );
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ status: 'pending', lastCheck: { txt: 'missing' } });
    expect((await h.temporal.workflow.getHandle(domainWorkflowId(id)).describe()).status.name).toBe('RUNNING');
  }, 300_000);
});
