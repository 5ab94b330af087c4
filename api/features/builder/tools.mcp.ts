import { z } from 'zod';

import { defineTool, type ToolDef, WRITE } from '../../mcp/tool';
import { nextFor, summary, WAIT_S } from '../deployments/tools-common.mcp';
import { commandWaiter, Outcome } from '../deployments/tools-wait.mcp';
import { SETTLED } from '../deployments/wait';
import type { BuilderContext } from './compose';
import { PUBLISH_TEXT, PublishAccepted, PublishRequest } from './routes.publish';
import { SessionIdParams } from './schemas';

/**
 * The builder's tools: publish_builder_session, the publish route's service with the route's body, waiting as
 * deploy and redeploy do (the creation up to running, a new release up to its end).
 */
export function builderTools(
  deps: Pick<BuilderContext, 'builderPublish' | 'deployments' | 'waitForDeployment' | 'temporal'>,
): ToolDef[] {
  const { settle, outcome } = commandWaiter(deps);
  const A = PublishAccepted.shape;
  return [
    defineTool({
      name: 'publish_builder_session',
      title: 'Publish a builder session',
      description: `${PUBLISH_TEXT} Waits up to waitS seconds for the deployment to run, or the new release to end, then answers with the outcome and what to call next.`,
      // The session's project is the service's to find and judge (a session of another org reads as not found).
      permission: 'deployment.create',
      input: z.object({ sessionId: SessionIdParams.shape.id, ...PublishRequest.shape, waitS: WAIT_S }).strict(),
      output: Outcome.partial({ command: true, state: true }).extend({
        sessionId: A.sessionId,
        checkpointId: A.checkpointId,
        url: A.url,
        created: A.created,
        uploadId: A.uploadId,
        settled: z.boolean().optional(),
      }),
      annotations: { ...WRITE, idempotentHint: false },
      audit: { resource: 'session', id: (input) => input.sessionId },
      run: async ({ principal, input, signal }) => {
        const { sessionId, waitS, ...body } = input;
        const r = await deps.builderPublish.publish(principal, sessionId, body);
        const about = {
          sessionId,
          checkpointId: r.checkpoint._id,
          url: r.url,
          created: r.created,
          uploadId: r.uploadId,
        };
        const id = r.deployment._id;
        if (r.command) {
          await settle(id, r.command.id, waitS, signal);
          return { ...about, ...(await outcome(principal, id, r.command.id, 'redeploy')) };
        }
        const d = waitS
          ? await deps.waitForDeployment(principal, id, { until: 'running', timeoutS: waitS })
          : r.deployment;
        const next = nextFor(d);
        return {
          ...about,
          deploymentId: id,
          deployment: summary(d),
          settled: SETTLED.includes(d.status),
          ...(next ? { next } : {}),
        };
      },
    }),
  ];
}
