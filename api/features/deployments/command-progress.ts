import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal as proto } from '@temporalio/proto';

import {
  type CommandFailure,
  type CommandName,
  type CommandOutcome,
  COMMANDS,
  deploymentWorkflowId,
} from '@shared/contracts/deployment';
import type { DeploymentStatus } from '@shared/deployments/types';

/**
 * A deployment's commands as its workflow's history tells them, followed as the history grows: accepted (the
 * update's acceptance), started, succeeded or failed (its completion, with the release it left or tried). History
 * is what the workflow records for good; the commands query shows only the present, so a command that came and went
 * between two looks would be missed there.
 */

export interface CommandEvent {
  /** The update ID the command was accepted under: what POST …/{command} answered as `command.id`. */
  id: string;
  command: CommandName;
  state: 'accepted' | 'started' | 'succeeded' | 'failed';
  at: string;
  /** succeeded: the release that serves; failed: the release it tried, when it got that far. */
  revision?: number;
  /** succeeded: the deployment's status and replicas after it. */
  status?: DeploymentStatus;
  replicas?: number;
  /** failed: why, in our words (never engine text). */
  message?: string;
}

/** Every command event up to time `at` (ms) was handed over, and the first `n` of those at exactly `at`. */
export interface CommandCursor {
  at: number;
  n: number;
}

type HistoryEvent = proto.api.history.v1.IHistoryEvent;

const isCommand = (name: string | null | undefined): name is Exclude<CommandName, 'destroy'> =>
  !!name && name !== 'destroy' && (COMMANDS as readonly string[]).includes(name);

/**
 * The command events one history event means. The workflow carries its commands out one at a time in the order it
 * accepted them (workflows/deployment/workflow.ts), so a command starts when accepted with none running, or when
 * the one before it ends. Destroy is left out: the stream's own `destroyed` event says it.
 */
export function commandTimeline() {
  const queue: { id: string; command: CommandName }[] = [];
  let running: { id: string; command: CommandName } | undefined;
  const apply = (event: HistoryEvent): CommandEvent[] => {
    const at = new Date(tsToMs(event.eventTime)).toISOString();
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted) {
      const name = accepted.acceptedRequest?.input?.name;
      const id = accepted.acceptedRequest?.meta?.updateId ?? accepted.protocolInstanceId;
      if (!isCommand(name) || !id) return [];
      const out: CommandEvent[] = [{ id, command: name, state: 'accepted', at }];
      if (running) queue.push({ id, command: name });
      else {
        running = { id, command: name };
        out.push({ id, command: name, state: 'started', at });
      }
      return out;
    }
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    const id = completed?.meta?.updateId;
    if (!completed || !id) return [];
    const waiting = queue.findIndex((q) => q.id === id);
    const which = running?.id === id ? running : waiting >= 0 ? queue.splice(waiting, 1)[0] : undefined;
    // Accepted in an earlier run, or a destroy: nothing of it was told here.
    if (!which) return [];
    const out: CommandEvent[] = [{ id, command: which.command, at, ...ending(completed.outcome) }];
    if (which === running) {
      running = queue.shift();
      if (running) out.push({ id: running.id, command: running.command, state: 'started', at });
    }
    return out;
  };
  /** Commands accepted and not yet ended, as far as the history read so far tells. */
  const pending = () => (running ? 1 : 0) + queue.length;
  return Object.assign(apply, { pending });
}

function ending(
  outcome: proto.api.update.v1.IOutcome | null | undefined,
): Pick<CommandEvent, 'state' | 'revision' | 'status' | 'replicas' | 'message'> {
  const success = outcome?.success?.payloads?.[0];
  if (success) {
    const o = defaultPayloadConverter.fromPayload<CommandOutcome>(success);
    return { state: 'succeeded', revision: o.revision, status: o.status, replicas: o.replicas };
  }
  const failure = outcome?.failure;
  const detail = failure?.applicationFailureInfo?.details?.payloads?.[0];
  const report = detail ? defaultPayloadConverter.fromPayload<CommandFailure | undefined>(detail) : undefined;
  return {
    state: 'failed',
    message: failure?.message || 'The command failed.',
    ...(typeof report?.revision === 'number' ? { revision: report.revision } : {}),
  };
}

const NOT_FOUND = 5;
const PAGE = 500;

/**
 * Follows the deployment workflow's history (the server answers a read at its end only once something is added, so
 * nothing is polled), from the newest run on across continue-as-new, and hands over each command event after
 * `from` with its cursor. Resolves when the workflow ended (the deployment was destroyed) or has none, or when
 * `signal` aborts; rejects when Temporal fails. A command of an earlier run (before a continue-as-new) is not read
 * again on a resume.
 */
export async function followCommands(
  temporal: Client,
  deploymentId: string,
  opts: {
    from: CommandCursor;
    signal: AbortSignal;
    /** Each time the history was read to its end: how many commands are accepted and not yet ended. */
    onCaughtUp?: (pending: number) => void;
  },
  onEvent: (e: CommandEvent, cursor: CommandCursor) => void,
): Promise<void> {
  const { signal, from } = opts;
  const timeline = commandTimeline();
  let pos: CommandCursor = { at: 0, n: 0 };
  let runId = '';
  let nextPageToken: Uint8Array | undefined;
  while (!signal.aborted) {
    let page;
    // A controller per call: the client adds a listener to the signal it is given and never removes it.
    const call = new AbortController();
    const cancel = () => call.abort();
    signal.addEventListener('abort', cancel, { once: true });
    try {
      page = await temporal.connection.withAbortSignal(call.signal, () =>
        temporal.workflowService.getWorkflowExecutionHistory({
          namespace: temporal.options.namespace,
          execution: { workflowId: deploymentWorkflowId(deploymentId), runId },
          ...(nextPageToken ? { nextPageToken } : {}),
          waitNewEvent: true,
          maximumPageSize: PAGE,
        }),
      );
    } catch (err) {
      if (signal.aborted) return;
      if ((err as { code?: number }).code === NOT_FOUND) {
        opts.onCaughtUp?.(0);
        return;
      }
      throw err;
    } finally {
      signal.removeEventListener('abort', cancel);
    }
    let closed = false;
    let continued = false;
    for (const event of page.history?.events ?? []) {
      for (const e of timeline(event)) {
        const t = Date.parse(e.at);
        pos = t > pos.at ? { at: t, n: 1 } : { at: pos.at, n: pos.n + 1 };
        if (pos.at < from.at || (pos.at === from.at && pos.n <= from.n)) continue;
        onEvent(e, pos);
      }
      const next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      if (next) {
        runId = next;
        nextPageToken = undefined;
        continued = true;
        break;
      }
      closed ||= Boolean(
        event.workflowExecutionCompletedEventAttributes ||
        event.workflowExecutionFailedEventAttributes ||
        event.workflowExecutionTerminatedEventAttributes ||
        event.workflowExecutionCanceledEventAttributes ||
        event.workflowExecutionTimedOutEventAttributes,
      );
    }
    if (continued) continue;
    // An open run's page always carries a token to wait on: none means the run is over.
    if (closed || !page.nextPageToken?.length) {
      opts.onCaughtUp?.(0);
      return;
    }
    if ((page.history?.events?.length ?? 0) < PAGE) opts.onCaughtUp?.(timeline.pending());
    nextPageToken = page.nextPageToken;
  }
}
