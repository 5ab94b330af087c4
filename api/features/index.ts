import type { RouteDef } from '../http/routes';
import { aiProvidersFeature } from './ai-providers';
import { auditFeature } from './audit';
import { builderFeature } from './builder';
import { deploymentsFeature } from './deployments';
import type { Feature, FeatureContext, Origin } from './feature';
import { projectsFeature } from './projects';
import { salesFeature } from './sales';
import { secretsFeature } from './secrets';
import { tokensFeature } from './tokens';
import { uploadsFeature } from './uploads';
import { usersFeature } from './users';

/** Every feature, once: the origins, the OpenAPI document and the MCP tool list iterate this list. */
export const FEATURES: Feature[] = [
  deploymentsFeature,
  uploadsFeature,
  tokensFeature,
  secretsFeature,
  salesFeature,
  auditFeature,
  projectsFeature,
  usersFeature,
  aiProvidersFeature,
  builderFeature,
];

/** The routes an origin serves, in the order of FEATURES. */
export const routesOf = (origin: Origin, ctx: FeatureContext): RouteDef[] =>
  FEATURES.flatMap((feature) => feature.routes[origin]?.(ctx) ?? []);
