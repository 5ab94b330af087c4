import fs from 'node:fs/promises';
import path from 'node:path';

import {
  APP_USER,
  BuildPlanError,
  cmd,
  exists,
  httpdCmd,
  type PlanOptions,
  type StackPlan,
  STAGE_CA,
  staticSiteLines,
  USER_LINE,
  withBuildOnly,
} from './plan-common';
import type { BuildRegistries } from './registries';

interface PackageJson {
  main?: unknown;
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
}

/** Where `npm run build` of a static site usually writes it (Vite and Parcel, Create React App, Next export). */
export const STATIC_OUTPUT_DIRS = ['dist', 'build', 'out'] as const;

/** "line 3, column 5" for a JSON.parse message's `position N`, counted in `text`. */
function whereInJson(text: string, message: string): string {
  const at = /position (\d+)/.exec(message);
  if (!at) return '';
  const before = text.slice(0, Number(at[1]));
  const line = before.split('\n').length;
  return ` at line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}

async function readPackageJson(dir: string): Promise<PackageJson> {
  const text = await fs.readFile(path.join(dir, 'package.json'), 'utf8');
  let pkg: unknown;
  try {
    pkg = JSON.parse(text);
  } catch (err) {
    const why = (err as Error).message.replace(/ in JSON at position \d+.*$/s, '').replace(/^Unexpected/, 'unexpected');
    throw new BuildPlanError(
      `package.json is not valid JSON${whereInJson(text, (err as Error).message)} (${why}); fix it and deploy again`,
    );
  }
  if (typeof pkg !== 'object' || pkg === null || Array.isArray(pkg)) {
    throw new BuildPlanError('package.json must hold a JSON object ({ "name": …, "scripts": … })');
  }
  return pkg as PackageJson;
}

/** A server framework's own start command, for apps whose package.json leaves `start` out. */
function frameworkStart(pkg: PackageJson, port: number): string[] | undefined {
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  if (deps.next) return ['node_modules/.bin/next', 'start', '-p', String(port)];
  if (deps.nuxt) return ['node', '.output/server/index.mjs'];
  if (deps['@sveltejs/adapter-node']) return ['node', 'build'];
  if (deps['@astrojs/node']) return ['node', './dist/server/entry.mjs'];
  return undefined;
}

/** The install command: `npm ci` with npm's own lockfile, `npm install` otherwise (and a note for another one's). */
async function installOf(dir: string): Promise<{ install: string; note?: string }> {
  if ((await exists(path.join(dir, 'package-lock.json'))) || (await exists(path.join(dir, 'npm-shrinkwrap.json')))) {
    return { install: 'npm ci --no-audit --no-fund' };
  }
  const other = (await exists(path.join(dir, 'yarn.lock')))
    ? 'yarn.lock'
    : (await exists(path.join(dir, 'pnpm-lock.yaml')))
      ? 'pnpm-lock.yaml'
      : undefined;
  return {
    install: 'npm install --no-audit --no-fund',
    ...(other ? { note: `${other} is not npm's lockfile: npm install resolves the versions afresh` } : {}),
  };
}

/** The build stage: the source, its dependencies installed with the registry settings, then `npm run build`. */
function buildStage(base: string, install: string, build: boolean, registries: BuildRegistries): string[] {
  const vars = {
    NODE_EXTRA_CA_CERTS: registries.caBundle ? STAGE_CA : undefined,
    NPM_CONFIG_REGISTRY: registries.npmRegistry,
  };
  return [
    `FROM ${base} AS build`,
    'WORKDIR /app',
    'COPY . .',
    ...withBuildOnly(install, vars),
    ...(build ? ['RUN npm run build'] : []),
  ];
}

/**
 * A Node project: a server started by its `start` script, its `main` file, a framework's build output or
 * server.js/index.js/app.js; failing that, a static site that `npm run build` writes to dist/, build/ or out/, or
 * the folder itself when it holds an index.html. Dependencies are installed in a build stage; the final stage
 * gets the app, never the stage's registry settings.
 */
export async function nodePlan(dir: string, opts: PlanOptions, registries: BuildRegistries): Promise<StackPlan> {
  const pkg = await readPackageJson(dir);
  const scripts = pkg.scripts ?? {};
  const build = typeof scripts.build === 'string';
  const { install, note } = await installOf(dir);
  const installStep = install.split(' --')[0]!;
  const notes = note ? [note] : [];

  let start: string[] | undefined;
  if (typeof scripts.start === 'string') start = ['npm', 'start'];
  else if (typeof pkg.main === 'string' && (await exists(path.join(dir, pkg.main)))) start = ['node', pkg.main];
  else if (build && frameworkStart(pkg, opts.port)) start = frameworkStart(pkg, opts.port);
  else {
    for (const entry of ['server.js', 'index.js', 'app.js']) {
      if (await exists(path.join(dir, entry))) {
        start = ['node', entry];
        break;
      }
    }
  }

  if (start) {
    const lines = [
      ...buildStage(opts.baseImages.node, install, build, registries),
      '',
      `FROM ${opts.baseImages.node}`,
      'WORKDIR /app',
      // The app user's own: frameworks write beside their code as they run (Next.js's .next/cache, uploads, SQLite).
      `COPY --from=build --chown=${APP_USER} /app /app`,
      // Set in this stage only, so the install above brings the devDependencies a build usually needs.
      `ENV NODE_ENV=production PORT=${opts.port}`,
      `EXPOSE ${opts.port}`,
      USER_LINE,
      cmd(start),
    ];
    const steps = [...notes, installStep, ...(build ? ['npm run build'] : []), start.join(' ')];
    return { kind: 'node', lines, steps, installs: true };
  }

  if (build) {
    const dirs = STATIC_OUTPUT_DIRS.map((d) => `${d}/`).join(', ');
    const find = [
      `for d in ${STATIC_OUTPUT_DIRS.join(' ')}; do if [ -f "$d/index.html" ]; then mv "$d" /site && exit 0; fi; done`,
      `echo "npm run build wrote no ${dirs.replace(/, (?=[^,]*$)/, ' or ')} folder with an index.html" >&2`,
      'exit 1',
    ].join('; ');
    const lines = [
      ...buildStage(opts.baseImages.node, install, true, registries),
      `RUN ${find}`,
      '',
      `FROM ${opts.baseImages.static}`,
      'COPY --from=build /site /srv/www',
      `EXPOSE ${opts.port}`,
      USER_LINE,
      httpdCmd(opts.port),
    ];
    return { kind: 'static', lines, steps: [...notes, installStep, 'npm run build', `serve ${dirs}`], installs: true };
  }

  if (await exists(path.join(dir, 'index.html'))) {
    return {
      kind: 'static',
      lines: staticSiteLines(opts.baseImages.static, opts.port),
      steps: ['copy the site', 'httpd'],
      installs: false,
    };
  }
  const main = typeof pkg.main === 'string' ? ` ("main" names ${pkg.main}, which is not in the source)` : '';
  throw new BuildPlanError(
    `package.json has no "start" script${main}, there is no server.js, index.js or app.js, and no "build" script to make a static site: add a "start" script, e.g. "start": "node server.js"`,
  );
}
