import path from 'node:path';

/**
 * Our top-level folders by alias (`@shared/…`), as tsconfig.json's "paths" name them: an import across folders
 * says where it goes instead of counting `../`. tsx and tsc read tsconfig.json; jest (moduleNameMapper) and the
 * workflow bundler (below) are told the same list, which test/unit/aliases.test.ts keeps equal.
 */
export const ALIASED_FOLDERS = [
  'activities',
  'api',
  'bench',
  'cli',
  'examples',
  'scripts',
  'shared',
  'test',
  'worker',
  'workflows',
] as const;

const root = path.resolve(__dirname, '..');

/** Temporal bundles workflow code with webpack, which knows nothing of tsconfig.json: it gets the aliases here. */
export const workflowBundlerOptions = {
  webpackConfigHook: <C extends { resolve?: { alias?: unknown } }>(config: C): C => ({
    ...config,
    resolve: {
      ...config.resolve,
      alias: {
        ...(config.resolve?.alias as Record<string, string> | undefined),
        ...Object.fromEntries(ALIASED_FOLDERS.map((f) => [`@${f}`, path.join(root, f)])),
      },
    },
  }),
};
