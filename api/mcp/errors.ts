import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { type AppError, compatCodeOf } from '@shared/errors';

import type { Next, ToolError } from './tool';

/** Failures the same call may get past later: a spent budget, our own fault, a cloud's API that did not answer. */
const RETRYABLE = new Set(['RATE_LIMIT_EXCEEDED', 'INTERNAL_ERROR', 'CLOUD_UNREACHABLE']);

/** What to call after a failure, by its code, unless the failure named its own `next` in details. */
function nextAfter(e: AppError, tool: string, args: unknown): Next | undefined {
  const own = e.details.next as Next | undefined;
  if (own && typeof own.tool === 'string') return own;
  const deploymentId = e.details.deploymentId;
  switch (e.code) {
    case 'INSUFFICIENT_SCOPE':
      return {
        tool: 'whoami',
        why: 'See the scopes and role this token has; ask for a token that has what is missing.',
      };
    case 'RATE_LIMIT_EXCEEDED':
      return {
        tool,
        arguments: (args ?? {}) as Record<string, unknown>,
        why: `The same call succeeds after ${String(e.details.retryAfterSeconds)} s.`,
      };
    // Without the arguments: they may be the credentials being set, which are not echoed back.
    case 'CLOUD_UNREACHABLE':
      return {
        tool,
        why: 'The cloud’s API did not answer; the same call, arguments unchanged, may succeed in a minute.',
      };
    case 'DEPLOYMENT_NOT_FOUND':
      return { tool: 'list_deployments', why: 'Find the ID of a deployment this organisation holds.' };
    case 'DUPLICATE_REQUEST':
      return typeof deploymentId === 'string'
        ? {
            tool: 'wait_for_deployment',
            arguments: { deploymentId },
            why: 'The first request with this requestId made this deployment; follow it instead.',
          }
        : undefined;
    case 'QUOTA_EXCEEDED':
      return { tool: 'list_deployments', why: 'Destroy a deployment you no longer need, then deploy again.' };
    default:
      return undefined;
  }
}

/** The failure an agent acts on: the compat code, whether the same call can succeed later, and what to call next. */
export function toolErrorOf(e: AppError, tool: string, args: unknown): ToolError {
  const { next: _own, retryAfterSeconds, ...details } = e.details;
  const next = nextAfter(e, tool, args);
  return {
    code: compatCodeOf(e.code),
    message: e.message,
    retryable: RETRYABLE.has(e.code),
    ...(typeof retryAfterSeconds === 'number' ? { retryAfterS: retryAfterSeconds } : {}),
    ...(next ? { next } : {}),
    ...(Object.keys(details).length ? { details } : {}),
  };
}

/**
 * The text of a failed call: `CODE: message` for a model to read first, then the whole failure as JSON on the last
 * line (JSON.stringify writes no line break, so a program takes the last line whatever the message spans).
 */
export const errorText = (body: ToolError): string => `${body.code}: ${body.message}\n${JSON.stringify(body)}`;

/**
 * A failed call as MCP has tool failures reported: a result with `isError` and text content, so the model reads it.
 * No structuredContent: a tool's outputSchema describes its answer, and a client that validates structuredContent
 * against it (the official SDK's does) would turn a failure shaped otherwise into a protocol error the agent never
 * sees.
 */
export function errorResult(e: AppError, tool: string, args: unknown): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: errorText(toolErrorOf(e, tool, args)) }] };
}
