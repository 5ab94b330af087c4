import { z } from 'zod';

import type { Core } from '@api/core';
import { composeFeatures, defineFeature, featureList } from '@api/features/feature';
import { route } from '@api/http/routes';
import { defineTool, READ } from '@api/mcp/tool';

/** The composition reads nothing of the core but hands it on: a marker object stands in for it here. */
const core = { config: { marker: 'core' } } as unknown as Core;

const ping = (path: string) =>
  route({ method: 'get', path, summary: path, tags: [], request: {}, before: [], responses: {}, handler: () => {} });

const counter = defineFeature({
  name: 'counter',
  compose: () => {
    let n = 0;
    return { counter: { next: () => ++n } };
  },
  routes: { platform: () => [ping('/counter')] },
});

/** A feature that builds on the one before it, and sees the core as it was given. */
const doubler = defineFeature({
  name: 'doubler',
  compose: (c: Core, needs: { counter: { next: () => number } }) => ({
    doubler: { next: () => 2 * needs.counter.next(), core: c },
  }),
  routes: { platform: () => [ping('/doubler')], compat: () => [ping('/compat-doubler')] },
  tools: (ctx) => [
    defineTool({
      name: `double_${ctx.doubler.next()}`,
      title: 'Double',
      description: 'Doubles the count',
      permission: null,
      input: z.object({}),
      output: z.object({}),
      annotations: READ,
      run: async () => ({}),
    }),
  ],
});

describe('features composed from the one list', () => {
  it('composes in list order, each from the core and the services of those before it', async () => {
    const composed = await composeFeatures(core, featureList().add(counter).add(doubler));
    expect(composed.routes.platform.map((r) => r.path)).toEqual(['/counter', '/doubler']);
    expect(composed.routes.compat.map((r) => r.path)).toEqual(['/compat-doubler']);
    expect(composed.routes.entitlements).toEqual([]);
    // The tool was built over the doubler, which counted through the counter composed before it.
    expect(composed.tools.map((t) => t.name)).toEqual(['double_2']);
  });

  it('stops at start when two features claim one service name, naming it', async () => {
    const again = defineFeature({ name: 'again', compose: () => ({ counter: 1 }), routes: {} });
    await expect(composeFeatures(core, featureList().add(counter).add(again))).rejects.toThrow(
      'feature again provides "counter", which a feature before it provides already',
    );
    const shadow = defineFeature({ name: 'shadow', compose: () => ({ config: 1 }), routes: {} });
    await expect(composeFeatures(core, featureList().add(shadow))).rejects.toThrow(
      'feature shadow provides "config", which the core provides already',
    );
  });

  it('does not compile a feature listed before the one it needs', () => {
    // @ts-expect-error -- doubler needs counter, which no feature before it provides
    expect(featureList().add(doubler).features).toHaveLength(1);
  });
});
