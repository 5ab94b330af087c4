import type { Core } from '../core';
import type { RouteDef } from '../http/routes';
import type { ToolDef } from '../mcp/tool';

/**
 * The HTTP origins a feature can serve (docs/architecture.md, "Processes and the parts they use"); MCP tools come
 * from the same features. `hooks` takes no token: its routes authenticate each request themselves (a signature).
 */
export type Origin = 'compat' | 'platform' | 'entitlements' | 'hooks';
export const ORIGINS: readonly Origin[] = ['compat', 'platform', 'entitlements', 'hooks'];

/**
 * What a feature's routes and tools are built from: the shared core (connections, cross-cutting services, the
 * frame's middleware, so no feature wires authorization or limits by hand) and the feature's services.
 */
export type FeatureContext<Services extends object = object> = Core & Services;

/**
 * One feature: a folder under api/features/, listed once in features/index.ts. `compose` builds the feature's own
 * services from the core and from `needs`, the services of features listed before it (typed: a feature listed
 * before what it needs does not compile); its routes and tools then see the core, what it needs and its own.
 */
export interface Feature<Own extends object = object, Needs extends object = object> {
  name: string;
  compose?: (core: Core, needs: Needs) => Own | Promise<Own>;
  routes: Partial<Record<Origin, (ctx: FeatureContext<Needs & Own>) => RouteDef[]>>;
  /** The feature's MCP tools (tools.mcp.ts), served at /mcp and by `slipway mcp` (api/mcp/server.ts). */
  tools?: (ctx: FeatureContext<Needs & Own>) => ToolDef[];
}

export const defineFeature = <Own extends object = object, Needs extends object = object>(
  feature: Feature<Own, Needs>,
): Feature<Own, Needs> => feature;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of features of every service type
type AnyFeature = Feature<any, any>;

/** Each service a feature needs that no feature before it provides (or provides with another type). */
type Unmet<Provided, Needs> = {
  [K in keyof Needs as K extends keyof Provided ? (Provided[K] extends Needs[K] ? never : K) : K]: 'provide it first';
};

/** Features in composition order; `Provided` is what the features so far provide to those after them. */
export interface FeatureList<Provided extends object> {
  readonly features: readonly AnyFeature[];
  /** The list with `feature` after the others; compiles only when those before provide everything it needs. */
  add<Own extends object, Needs extends object>(
    feature: Feature<Own, Needs> & (Provided extends Needs ? unknown : Unmet<Provided, Needs>),
  ): FeatureList<Provided & Own>;
}

export function featureList(features: readonly AnyFeature[] = []): FeatureList<object> {
  return {
    features,
    add: (feature: AnyFeature) => featureList([...features, feature]),
  } as FeatureList<object>;
}

/** What the features amount to once composed: every origin's routes and every MCP tool, in list order. */
export interface ComposedFeatures {
  routes: Record<Origin, RouteDef[]>;
  tools: ToolDef[];
}

/**
 * Composes the features in list order, each from the core and the services of those before it. A service name two
 * features (or a feature and the core) both claim stops the api at start rather than shadowing one of them.
 */
export async function composeFeatures(
  core: Core,
  list: Pick<FeatureList<object>, 'features'>,
): Promise<ComposedFeatures> {
  let services: Record<string, unknown> = {};
  const composed: ComposedFeatures = { routes: { compat: [], platform: [], entitlements: [], hooks: [] }, tools: [] };
  for (const feature of list.features) {
    // Sequential on purpose: a feature's indexes are made in its compose, and FerretDB builds them poorly at once.
    const own = ((await feature.compose?.(core, services)) ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(own)) {
      if (name in core || name in services)
        throw new Error(
          `feature ${feature.name} provides "${name}", which ${name in core ? 'the core' : 'a feature before it'} provides already`,
        );
    }
    services = { ...services, ...own };
    const ctx = { ...core, ...services };
    for (const origin of ORIGINS) composed.routes[origin].push(...(feature.routes[origin]?.(ctx) ?? []));
    composed.tools.push(...(feature.tools?.(ctx) ?? []));
  }
  return composed;
}
