import { randomUUID } from 'node:crypto';

import { msToTs } from '@temporalio/common/lib/time';
import { workflowMetadataQuery } from '@temporalio/workflow';

import { SEARCH_ATTRIBUTES } from '@shared/constants';
import { deploymentWorkflowId } from '@shared/contracts/deployment';
import { ensureSearchAttributes } from '@shared/temporal';
import { PHASE_WORDS } from '@workflows/deployment/failures';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

interface Deployment {
  id: string;
  status: string;
  lastFailure?: { phase: string; message: string; hint?: string };
}
type Accepted = { data: { deployment: Deployment; command?: { url: string } } };

/**
 * What an operator sees of deployments in the Temporal UI, asked of the real dev server as the UI asks it: list
 * queries over the search attributes (visibility answers a little after each change, so each is polled, bounded),
 * and a workflow's user metadata — its summary and details, and the current details its page shows.
 */
describe('deployments in the Temporal UI (real Temporal dev server, FerretDB, Docker Engine)', () => {
  let h: Harness;
  let api: ReturnType<typeof client>;
  let orgId: string;
  let hello: string;
  let crash: string;

  beforeAll(async () => {
    // One command per run: the stop below continues the workflow as new, whose run must keep what the UI shows.
    h = await startHarness('visibility', { DEPLOY_READY_TIMEOUT_S: '30', DEPLOYMENT_COMMANDS_PER_RUN: '1' });
    hello = await buildFixtureImage(h.docker, 'hello');
    crash = await buildFixtureImage(h.docker, 'crash');
    const org = await h.newOrg('pro');
    orgId = org.orgId;
    api = client(h, org.token);
  });
  afterAll(() => h?.stop());

  const get = async (id: string) => (await api.get<{ data: Deployment }>(`/platform/deployments/${id}`)).body.data;
  const settled = (id: string, status: string) =>
    eventually(
      async () => {
        const d = await get(id);
        if (d.status === status) return d;
        if (d.status === 'failed') throw new Error(`deployment ${id} failed: ${JSON.stringify(d)}`);
        return undefined;
      },
      `deployment ${id} to be ${status}`,
      90_000,
    );
  const deploy = async (body: Record<string, unknown>) => {
    const r = await api.post<Accepted>('/platform/deployments', { port: 8080, ...body });
    expect(r.status).toBe(202);
    return r.body.data.deployment.id;
  };
  /**
   * The workflows a list query answers, once it answers `expected` (visibility is eventually consistent); a
   * workflow that continued as new is listed once per run.
   */
  const listed = (query: string, expected: string[]) =>
    eventually(
      async () => {
        const ids: string[] = [];
        for await (const w of h.temporal.workflow.list({ query })) ids.push(w.workflowId);
        ids.sort();
        return JSON.stringify(ids) === JSON.stringify([...expected].sort()) ? ids : undefined;
      },
      `${query} to list ${expected.join(', ') || 'nothing'}`,
    );
  const handle = (id: string) => h.temporal.workflow.getHandle(deploymentWorkflowId(id));
  const currentDetails = async (id: string) => (await handle(id).query(workflowMetadataQuery)).currentDetails ?? '';

  let projectId: string;
  let web: string;
  let broken: string;
  let paused: string;

  it('lists running, failed and stopped deployments by DeploymentStatus, and finds them by name and project', async () => {
    projectId = (
      await api.post<{ data: { id: string } }>('/platform/projects', { name: `p-${randomUUID().slice(0, 6)}` })
    ).body.data.id;
    web = await deploy({ image: hello, name: 'web', projectId });
    broken = await deploy({ image: crash, name: 'broken' });
    paused = await deploy({ image: hello, name: 'paused' });
    await settled(web, 'running');
    await settled(paused, 'running');
    await eventually(
      async () => ((await get(broken)).status === 'failed' ? true : undefined),
      'broken to fail',
      90_000,
    );
    const firstRun = (await handle(paused).describe()).runId;
    const stop = await api.post<Accepted>(`/platform/deployments/${paused}/stop`);
    expect(stop.status).toBe(202);
    await settled(paused, 'stopped');
    await eventually(
      async () => ((await handle(paused).describe()).runId !== firstRun ? true : undefined),
      'the stopped deployment to continue as new',
    );

    // The workflows themselves are all open ("Running" in the UI): only the attribute tells them apart.
    const open = `OrgId="${orgId}" AND ExecutionStatus="Running"`;
    await listed(open, [web, broken, paused].map(deploymentWorkflowId));
    await listed(`DeploymentStatus="failed" AND ${open}`, [deploymentWorkflowId(broken)]);
    await listed(`DeploymentStatus="running" AND ${open}`, [deploymentWorkflowId(web)]);
    // The run that continued it: the attributes went with it.
    await listed(`DeploymentStatus="stopped" AND ${open}`, [deploymentWorkflowId(paused)]);
    const org = `OrgId="${orgId}"`;
    await listed(`DeploymentName="web" AND ${org}`, [deploymentWorkflowId(web)]);
    await listed(`ProjectId="${projectId}"`, [deploymentWorkflowId(web)]);
    await listed(`DeploymentId="${broken}"`, [deploymentWorkflowId(broken)]);
  });

  it("names the app and its org in the workflow's summary, and says the status and the last failure in its details", async () => {
    const described = await handle(web).describe();
    expect(await described.staticSummary()).toBe('web of org test-visibility');
    const details = await described.staticDetails();
    expect(details).toContain(`\`${web}\``);
    expect(details).toContain(`Project: \`${projectId}\``);
    expect(details).toContain(`image \`${hello}\``);
    expect(described.searchAttributes).toMatchObject({
      DeploymentId: [web],
      OrgId: [orgId],
      DeploymentStatus: ['running'],
      DeploymentName: ['web'],
      ProjectId: [projectId],
    });
    expect(await currentDetails(web)).toMatch(/^\*\*running\*\*\n\n```\nanswering on port 8080\n```$/);

    const failed = await get(broken);
    const shown = await currentDetails(broken);
    expect(shown).toMatch(/^\*\*failed\*\*/);
    // The app's own words (its last log lines are in the message) only inside a code block, shown literally. A crash
    // at start is caught while the container starts or while the app is awaited, whichever sees it first.
    const { phase, message, hint } = failed.lastFailure!;
    expect(['start', 'ready']).toContain(phase);
    expect(shown).toContain(
      `Last failure: the deploy of release 1 failed while ${PHASE_WORDS[phase as 'start' | 'ready']}.\n\n\`\`\`\n${message}\n\n${hint}\n\`\`\``,
    );
    expect(shown).toContain('boom: missing DATABASE_URL');
    // The run that continued it has the attributes, but no summary: its details name the app instead.
    const continued = await handle(paused).describe();
    expect(continued.searchAttributes).toMatchObject({ DeploymentStatus: ['stopped'], DeploymentName: ['paused'] });
    expect(await currentDetails(paused)).toMatch(
      /^paused of org test-visibility\n\n\*\*stopped\*\*\n\n```\nstopped; start it again/,
    );
  });

  it('registers the attributes on a namespace that lacks them, as the api and the worker start together', async () => {
    const namespace = `visibility-${randomUUID().slice(0, 8)}`;
    const { workflowService, operatorService } = h.temporal.connection;
    await workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const names = async () =>
      Object.keys((await operatorService.listSearchAttributes({ namespace })).customAttributes ?? {});
    await eventually(async () => (await names()) && true, `namespace ${namespace} to answer`);
    expect(await names()).not.toContain(SEARCH_ATTRIBUTES.status.name);
    await Promise.all([
      ensureSearchAttributes(h.temporal.connection, namespace),
      ensureSearchAttributes(h.temporal.connection, namespace),
    ]);
    expect(await names()).toEqual(expect.arrayContaining(Object.values(SEARCH_ATTRIBUTES).map((k) => k.name)));
  });

  it('lists destroyed deployments as destroyed, no longer as failed, running or stopped', async () => {
    for (const id of [broken, web, paused]) {
      expect((await api.del(`/platform/deployments/${id}`)).status).toBe(204);
      await handle(id).result();
    }
    const org = `OrgId="${orgId}"`;
    await listed(`DeploymentStatus="destroyed" AND ${org}`, [broken, web, paused].map(deploymentWorkflowId));
    // (The first run of the one that continued as new ended `stopped`; a closed run keeps its attributes.)
    await listed(
      `DeploymentStatus IN ("failed", "running", "stopped") AND ${org} AND ExecutionStatus!="ContinuedAsNew"`,
      [],
    );
    expect(await currentDetails(broken)).toMatch(/^\*\*destroyed\*\*/);
  });
});
