import type { RequestHandler } from 'express';

import type { Permission } from '../../shared/permissions';
import type { AppDeps } from '../app';
import type { CanOptions } from '../http/auth';
import type { RouteDef } from '../http/routes';
import type { ToolDef } from '../mcp/tool';

/**
 * The three HTTP origins a feature can serve (docs/architecture.md, "Processes and the parts they use"); MCP tools come
 * from the same features.
 */
export type Origin = 'compat' | 'platform' | 'entitlements';

/**
 * What a feature's routes are built from: the app's services and connections, plus the frame's middleware so
 * no feature wires authorization or limits by hand.
 */
export interface FeatureContext extends AppDeps {
  /**
   * Refuses the request unless `permission` is granted (shared/authz): 403 INSUFFICIENT_SCOPE naming what is
   * missing, or 404 for a project the caller cannot see. A route whose resource lives in a project says how to find
   * it — `can('project.update', { project: projectFrom.param('id') })` — and is then judged by the project role too.
   */
  can: (permission: Permission, opts?: CanOptions) => RequestHandler;
  /** Compat budgets per organisation (spec, "Limits"), and deployment creation per user on every origin. */
  limit: {
    compatReads: RequestHandler;
    compatWrites: RequestHandler;
    compatUploads: RequestHandler;
    deployCreate: RequestHandler;
  };
}

/** One feature: a folder under api/features/, listed once in features/index.ts. */
export interface Feature {
  name: string;
  routes: Partial<Record<Origin, (ctx: FeatureContext) => RouteDef[]>>;
  /** The feature's MCP tools (tools.mcp.ts), served at /mcp and by `slipway mcp` (api/mcp/server.ts). */
  tools?: (deps: AppDeps) => ToolDef[];
}

export const defineFeature = (feature: Feature): Feature => feature;
