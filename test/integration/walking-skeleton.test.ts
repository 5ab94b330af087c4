import { randomUUID } from 'node:crypto';

import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

import { LABELS } from '@shared/constants';

import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const decode = (p: temporal.api.common.v1.IPayload | null | undefined) =>
  p ? defaultPayloadConverter.fromPayload<unknown>(p) : undefined;

/** The deployment workflow's story as its history tells it: activities scheduled, signals, how it ended. */
function story(events: HistoryEvent[]) {
  const steps: string[] = [];
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) steps.push(scheduled === 'recordStatus' ? `recordStatus:${statusOf(e)}` : scheduled);
    // A local activity is a marker its workflow task recorded when it had run (with its result).
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = decode(marker.details?.data?.payloads?.[0]) as { activity_type?: string } | undefined;
      steps.push(`local:${data?.activity_type ?? '?'}`);
    }
    if (e.activityTaskCompletedEventAttributes) steps.push('✓');
    if (e.activityTaskFailedEventAttributes) steps.push('✗');
    if (e.workflowExecutionSignaledEventAttributes)
      steps.push(`signal:${e.workflowExecutionSignaledEventAttributes.signalName}`);
    if (e.workflowExecutionCompletedEventAttributes) steps.push('completed');
  }
  return steps;
}
function statusOf(e: HistoryEvent) {
  return (decode(e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]) as { status: string }).status;
}

// The wiring end to end on real services: HTTP → Temporal workflow → worker activities → MongoDB + Docker.
describe('walking skeleton (real Temporal dev server, FerretDB, Docker Engine)', () => {
  let h: Harness;
  let image: string;

  beforeAll(async () => {
    h = await startHarness('skeleton');
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(() => h?.stop());

  it('deploys a locally built image to a container that answers HTTP, then destroys it', async () => {
    const { token, orgId } = await h.newOrg();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const greeting = `greeting-${randomUUID()}`;
    const requestId = `skeleton-${randomUUID()}`;
    const accepted = await fetch(`${h.baseUrl}/compat/deploy`, {
      method: 'POST',
      headers: { ...auth, 'x-request-id': requestId },
      body: JSON.stringify({ image, name: 'hello', port: 8080, envVars: { GREETING: greeting } }),
    });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('x-request-id')).toBe(requestId);
    const { deploymentId, status } = (await accepted.json()) as { deploymentId: string; status: string };
    expect(status).toBe('queued');

    const running = await eventually(async () => {
      const res = await fetch(`${h.baseUrl}/compat/deployments/${deploymentId}`, { headers: auth });
      const body = (await res.json()) as { status: string; url: string | null; error?: { message: string } };
      if (body.status === 'failed') throw new Error(`deploy failed: ${body.error?.message}`);
      return body.status === 'running' ? body : undefined;
    }, 'the deployment to be running');

    const page = await fetch(running.url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('hello from slipway\n');

    const record = await h.db.collection('deployments').findOne({ _id: deploymentId as never });
    expect(record).toMatchObject({ orgId, status: 'running', source: { type: 'image', image } });
    expect((record!.events as { status: string }[]).map((e) => e.status)).toEqual([
      'queued',
      'deploying',
      'deploying',
      'running',
    ]);

    const containers = await h.docker.listContainers({
      filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] },
    });
    expect(containers).toHaveLength(1);
    expect(containers[0]!.Labels[LABELS.orgId]).toBe(orgId);

    const workflow = h.temporal.workflow.getHandle(`deployment/${deploymentId}`);
    // The record says running once the status write (a local activity) ran; the search attributes the workflow sets
    // beside it are the workflow's own state, committed when that workflow task completes, a moment later.
    const described = await eventually(async () => {
      const d = await workflow.describe();
      return d.searchAttributes.DeploymentStatus?.[0] === 'running' ? d : undefined;
    }, 'the workflow’s DeploymentStatus search attribute to say running');
    expect(described.type).toBe('deploymentWorkflow');
    expect(described.taskQueue).toBe(h.taskQueue);
    // The operator's way from a failed request to its workflow.
    expect(described.memo).toEqual({ requestId });
    expect(described.searchAttributes).toMatchObject({
      DeploymentId: [deploymentId],
      OrgId: [orgId],
      DeploymentStatus: ['running'],
      DeploymentName: ['hello'],
    });
    const deployed = (await workflow.fetchHistory()).events ?? [];
    const started = deployed[0]?.workflowExecutionStartedEventAttributes;
    // The input names the env variable and never carries its value (docs/architecture.md, "A deployment's lifecycle, as
    // workflows").
    expect(decode(started?.input?.payloads?.[0])).toMatchObject({
      deploymentId,
      orgId,
      source: { type: 'image', image },
      port: 8080,
      envNames: ['GREETING'],
      revision: 1,
      version: 1,
    });
    expect(JSON.stringify(decode(started?.input?.payloads?.[0]))).not.toContain(greeting);
    // Release 1: its image ID recorded, its instance started and ready, then the stable address switched to it. The
    // record and release writes and the switch are local activities (no round trips of their own through the
    // server), each status write beside the engine work that follows it.
    const steps = story(deployed);
    expect(steps.filter((x) => !x.startsWith('local:'))).toEqual([
      'prepareImage',
      '✓',
      'startInstance',
      '✓',
      'waitInstanceReady',
      '✓',
    ]);
    const locals = steps.filter((x) => x.startsWith('local:'));
    expect(locals.slice(0, -2)).toEqual([
      'local:recordStatus',
      'local:createRelease',
      'local:recordStatus',
      'local:routeTraffic',
    ]);
    // Only once the route is switched: the release marked active and the record `running`, side by side.
    expect(locals.slice(-2).sort()).toEqual(['local:recordStatus', 'local:setReleaseStatus']);
    // The release is recorded once its image is prepared, before its instance starts; the route switches only
    // after the instance answered.
    const at = (step: string, from = 0) => steps.indexOf(step, from);
    expect(at('local:createRelease')).toBeGreaterThan(at('✓', at('prepareImage')));
    expect(at('local:createRelease')).toBeLessThan(at('startInstance'));
    expect(at('local:routeTraffic')).toBeGreaterThan(at('✓', at('waitInstanceReady')));

    const destroyed = await fetch(`${h.baseUrl}/compat/deployments/${deploymentId}`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(destroyed.status).toBe(204);
    const gone = await fetch(`${h.baseUrl}/compat/deployments/${deploymentId}`, { headers: auth });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });

    await eventually(async () => {
      const left = await h.docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] },
      });
      return left.length === 0 ? true : undefined;
    }, 'the container to be removed');
    // The stable address is gone from the edge router: its host is unknown there now.
    expect((await fetch(running.url!)).status).toBe(404);

    // The destroy reached the workflow, which removed what the deployment held and ended.
    await workflow.result();
    const whole = (await workflow.fetchHistory()).events ?? [];
    expect(story(whole).slice(story(deployed).length)).toEqual([
      'signal:destroy',
      'local:routeTraffic',
      'removeDeployment',
      '✓',
      'completed',
    ]);
  });

  it('runs two deploys of one organisation at once on its single bridge network', async () => {
    const { token, orgId } = await h.newOrg();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const ids = await Promise.all(
      ['one', 'two'].map(async (name) => {
        const res = await fetch(`${h.baseUrl}/compat/deploy`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ image, name }),
        });
        expect(res.status).toBe(202);
        return ((await res.json()) as { deploymentId: string }).deploymentId;
      }),
    );
    for (const id of ids) {
      await eventually(async () => {
        const body = (await (await fetch(`${h.baseUrl}/compat/deployments/${id}`, { headers: auth })).json()) as {
          status: string;
        };
        if (body.status === 'failed') throw new Error(JSON.stringify(body));
        return body.status === 'running' ? body : undefined;
      }, `deployment ${id} to be running`);
    }
    const networks = (await h.docker.listNetworks()).filter((n) => n.Name === `slipway-org-${orgId}`);
    expect(networks).toHaveLength(1);
    for (const id of ids) {
      expect((await fetch(`${h.baseUrl}/compat/deployments/${id}`, { method: 'DELETE', headers: auth })).status).toBe(
        204,
      );
    }
  });
});
