import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { type Request, type Response, Router } from 'express';

import type { AppError } from '@shared/errors';
import { compatCodeOf } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import type { Core } from '../core';
import { ROUTE_LOCAL } from '../http/access-log';
import { bearerToken } from '../http/auth';
import { requestIdOf, toAppError } from '../http/errors';
import { limitKey } from '../http/rate-limit';
import { consumeLimit } from '../mcp/limit';
import { collectTools, createMcpServer } from '../mcp/server';
import type { ToolDef } from '../mcp/tool';

/** JSON-RPC's "server error" range: the HTTP status says what happened, `data.code` says it in the interface's codes. */
const RPC_ERROR = { INVALID_TOKEN: -32001, TOKEN_EXPIRED: -32001, RATE_LIMIT_EXCEEDED: -32002 } as Record<
  string,
  number
>;

/** A refusal before any MCP message is read, as a JSON-RPC error a client can show (status 401, 405 or 429). */
function refuse(res: Response, e: AppError, id: unknown = null): void {
  const retryAfterS = e.details.retryAfterSeconds;
  if (typeof retryAfterS === 'number') res.set('Retry-After', String(retryAfterS));
  if (e.status === 401) res.set('WWW-Authenticate', 'Bearer realm="slipway", error="invalid_token"');
  const code = compatCodeOf(e.code);
  res.status(e.status).json({
    jsonrpc: '2.0',
    id,
    error: {
      code: RPC_ERROR[code] ?? -32000,
      message: e.message,
      data: { code, ...(typeof retryAfterS === 'number' ? { retryAfterS } : {}) },
    },
  });
}

interface RpcMessage {
  id?: unknown;
  method?: unknown;
}
const messagesOf = (body: unknown): RpcMessage[] =>
  (Array.isArray(body) ? body : [body]).filter((m): m is RpcMessage => typeof m === 'object' && m !== null);

/**
 * `/mcp`: the stateless streamable-HTTP MCP server (docs/architecture.md, "MCP"). Every POST is authenticated with the
 * same `svc_` tokens as the REST origins and served by a fresh server and transport, so nothing lives between requests
 * and any api process answers any call. Budget: 300 requests per 5 minutes per token. A tools/call spends it inside the
 * frame (a refusal is an isError result with retryAfterS, which an agent reads); every other request (initialize,
 * tools/list, ping) spends it here, and a refusal is a 429 with Retry-After and a JSON-RPC error. Notifications (no id)
 * are not requests and spend nothing. GET (a server-to-client stream) and DELETE (ending a session) have no meaning
 * without sessions: 405.
 */
export function mcpRouter(
  deps: Pick<Core, 'identity' | 'authz' | 'auditTrail' | 'limiters' | 'log'>,
  toolDefs: ToolDef[],
): Router {
  const router = Router();
  const tools = collectTools(toolDefs);
  const limiter = deps.limiters.mcp;

  router.post('/', async (req: Request, res: Response) => {
    res.locals[ROUTE_LOCAL] = req.baseUrl;
    const requestId = requestIdOf(req);
    let principal: Principal;
    try {
      principal = await deps.identity.authenticate(bearerToken(req));
    } catch (err) {
      // A refused token spends its address's budget of the same size; past it the answer is 429, not 401.
      try {
        await consumeLimit(limiter, limitKey.address(req));
      } catch (refusal) {
        return refuse(res, toAppError(refusal, deps.log, requestId));
      }
      return refuse(res, toAppError(err, deps.log, requestId));
    }
    try {
      for (const m of messagesOf(req.body)) {
        if (m.id !== undefined && typeof m.method === 'string' && m.method !== 'tools/call')
          await consumeLimit(limiter, `token:${principal.token._id}`);
      }
    } catch (refusal) {
      return refuse(res, toAppError(refusal, deps.log, requestId), messagesOf(req.body)[0]?.id ?? null);
    }
    const server = createMcpServer(deps, tools, {
      principal: () => Promise.resolve(principal),
      ...(req.ip ? { ip: req.ip } : {}),
      ...(req.get('user-agent') ? { userAgent: req.get('user-agent')! } : {}),
      requestId,
    });
    // Stateless: no session ID; plain JSON answers (a tool that waits answers when it is done).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      if (!res.headersSent) refuse(res, toAppError(err, deps.log, requestId));
    }
  });

  router.all('/', (req: Request, res: Response) => {
    res.set('Allow', 'POST');
    res.status(405).json({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: `${req.method} is not allowed: this MCP server is stateless; POST JSON-RPC.` },
    });
  });
  return router;
}
