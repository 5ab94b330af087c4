import { z } from 'zod';

import { deploymentWorkflowId } from '@shared/contracts/deployment';
import { DeploymentStatus } from '@shared/deployments/types';
import type { Principal } from '@shared/identity/service';

import { Next } from '../../mcp/tool';
import type { DeploymentsContext } from './compose';
import { Summary, summary } from './tools-common.mcp';

/** How an accepted command stands when a tool answers: ended (with the release it left, or why not) or running. */
export const Outcome = z.object({
  deploymentId: z.uuid(),
  command: z.object({ id: z.string(), name: z.string() }),
  state: z.enum(['running', 'succeeded', 'failed']),
  status: DeploymentStatus.optional(),
  revision: z.number().int().optional(),
  replicas: z.number().int().optional(),
  message: z.string().optional(),
  deployment: Summary,
  next: Next.optional(),
});
export type Outcome = z.input<typeof Outcome>;

/**
 * The wait of every tool that sends a deployment command (the controls, and a files deploy's new release): up to
 * waitS seconds on Temporal's own long-poll of the update's result (no polling loop), then the command's outcome as
 * the service reads it, or the call that waits on.
 */
export function commandWaiter(deps: Pick<DeploymentsContext, 'deployments' | 'temporal'>) {
  const { deployments, temporal } = deps;

  async function settle(id: string, commandId: string, waitS: number, signal: AbortSignal): Promise<void> {
    if (waitS <= 0) return;
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), waitS * 1000);
    const cancel = () => stop.abort();
    signal.addEventListener('abort', cancel);
    try {
      await temporal.withAbortSignal(stop.signal, () =>
        temporal.workflow.getHandle(deploymentWorkflowId(id)).getUpdateHandle(commandId).result(),
      );
    } catch {
      // A failed command, a wait cut short: the service's own reading below says which, in its words.
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', cancel);
    }
  }

  async function outcome(principal: Principal, id: string, commandId: string, name: string): Promise<Outcome> {
    const progress = await deployments.command(principal, id, commandId);
    const d = await deployments.get(principal, id);
    const command = { id: commandId, name };
    const base = { deploymentId: id, command, state: progress.state, deployment: summary(d) };
    if (progress.state === 'succeeded') {
      const { status, revision, replicas } = progress.outcome;
      return { ...base, status, revision, replicas };
    }
    if (progress.state === 'failed')
      return {
        ...base,
        message: progress.message,
        next: { tool: 'diagnose_deployment', arguments: { deploymentId: id }, why: 'Read why, and what to change.' },
      };
    return {
      ...base,
      next: {
        tool: 'wait_for_command',
        arguments: { deploymentId: id, commandId },
        why: 'It is still being carried out; wait on it again.',
      },
    };
  }

  return { settle, outcome };
}
