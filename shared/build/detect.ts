import fs from 'node:fs/promises';
import path from 'node:path';

import { present, writeOwnFile } from './symlinks';

/** A source we cannot tell how to build; the message says what to add. */
export class BuildPlanError extends Error {
  override name = 'BuildPlanError';
}

export interface BuildPlan {
  kind: 'dockerfile' | 'node' | 'static' | 'python';
  /** Dockerfile to build, relative to the source root. */
  dockerfile: string;
  /** The Dockerfile we wrote, when the source had none. */
  generated?: string;
  /** What the build will do, for the build log. */
  steps: string[];
}

export interface PlanOptions {
  port: number;
  dockerfilePath?: string;
  baseImages: { node: string; static: string; python: string };
}

const exists = (file: string) =>
  fs.stat(file).then(
    (s) => s.isFile(),
    () => false,
  );

const cmd = (args: string[]) => `CMD [${args.map((a) => JSON.stringify(a)).join(', ')}]`;

async function nodePlan(dir: string, opts: PlanOptions): Promise<Omit<BuildPlan, 'dockerfile'>> {
  let pkg: { main?: unknown; scripts?: Record<string, unknown> };
  try {
    pkg = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as typeof pkg;
  } catch (err) {
    throw new BuildPlanError(`package.json is not valid JSON: ${(err as Error).message}`);
  }
  const scripts = pkg.scripts ?? {};
  const install = (await exists(path.join(dir, 'package-lock.json')))
    ? 'npm ci --no-audit --no-fund'
    : 'npm install --no-audit --no-fund';
  let start: string[];
  if (typeof scripts.start === 'string') start = ['npm', 'start'];
  else {
    const candidates = [typeof pkg.main === 'string' ? pkg.main : undefined, 'server.js', 'index.js'];
    const entry = (
      await Promise.all(candidates.map(async (c) => (c && (await exists(path.join(dir, c))) ? c : undefined)))
    ).find(Boolean);
    if (!entry) {
      throw new BuildPlanError(
        'package.json has no start script and there is no server.js or index.js; add a "start" script',
      );
    }
    start = ['node', entry];
  }
  const build = typeof scripts.build === 'string';
  const lines = [
    `FROM ${opts.baseImages.node}`,
    'WORKDIR /app',
    'COPY . .',
    `RUN ${install}`,
    ...(build ? ['RUN npm run build'] : []),
    // Set after the build, so the install above brings the devDependencies a build usually needs.
    `ENV NODE_ENV=production PORT=${opts.port}`,
    `EXPOSE ${opts.port}`,
    cmd(start),
  ];
  return {
    kind: 'node',
    generated: `${lines.join('\n')}\n`,
    steps: [install.split(' --')[0]!, ...(build ? ['npm run build'] : []), start.join(' ')],
  };
}

async function pythonPlan(dir: string, opts: PlanOptions): Promise<Omit<BuildPlan, 'dockerfile'>> {
  let start: string[] | undefined;
  const procfile = await fs.readFile(path.join(dir, 'Procfile'), 'utf8').catch(() => undefined);
  const web = procfile ? /^web:\s*(.+)$/m.exec(procfile)?.[1]?.trim() : undefined;
  if (web) start = ['sh', '-c', web];
  else if (await exists(path.join(dir, 'app.py'))) start = ['python', 'app.py'];
  else if (await exists(path.join(dir, 'main.py'))) start = ['python', 'main.py'];
  if (!start) {
    throw new BuildPlanError(
      'requirements.txt found but nothing to run: add app.py, main.py or a Procfile with a web: line',
    );
  }
  const lines = [
    `FROM ${opts.baseImages.python}`,
    'WORKDIR /app',
    'COPY . .',
    'RUN pip install --no-cache-dir -r requirements.txt',
    `ENV PORT=${opts.port} PYTHONUNBUFFERED=1`,
    `EXPOSE ${opts.port}`,
    cmd(start),
  ];
  return {
    kind: 'python',
    generated: `${lines.join('\n')}\n`,
    steps: ['pip install -r requirements.txt', start.join(' ')],
  };
}

function staticPlan(opts: PlanOptions): Omit<BuildPlan, 'dockerfile'> {
  const port = String(opts.port);
  const lines = [
    `FROM ${opts.baseImages.static}`,
    'COPY . /srv/www',
    `EXPOSE ${port}`,
    cmd(['httpd', '-f', '-v', '-p', port, '-h', '/srv/www']),
  ];
  return { kind: 'static', generated: `${lines.join('\n')}\n`, steps: ['copy the site', 'httpd'] };
}

/**
 * Decides how a source tree is built: the given or root Dockerfile as is, else a Dockerfile generated from
 * the detected stack (Node, static site, Python) on the configured base images, written beside the source.
 */
export async function planBuild(dir: string, opts: PlanOptions): Promise<BuildPlan> {
  if (opts.dockerfilePath !== undefined) {
    const rel = path.posix.normalize(opts.dockerfilePath.replace(/^\.\//, ''));
    if (path.posix.isAbsolute(rel) || rel.split('/').includes('..') || rel.includes('\\')) {
      throw new BuildPlanError(`dockerfilePath "${opts.dockerfilePath}" must be a relative path inside the source`);
    }
    if (!(await exists(path.join(dir, rel)))) {
      throw new BuildPlanError(`dockerfilePath "${opts.dockerfilePath}" was not found in the source`);
    }
    return { kind: 'dockerfile', dockerfile: rel, steps: [`docker build -f ${rel}`] };
  }
  if (await exists(path.join(dir, 'Dockerfile'))) {
    return { kind: 'dockerfile', dockerfile: 'Dockerfile', steps: ['docker build'] };
  }

  let plan: Omit<BuildPlan, 'dockerfile'>;
  if (await exists(path.join(dir, 'package.json'))) plan = await nodePlan(dir, opts);
  else if (await exists(path.join(dir, 'index.html'))) plan = staticPlan(opts);
  else if (await exists(path.join(dir, 'requirements.txt'))) plan = await pythonPlan(dir, opts);
  else {
    throw new BuildPlanError(
      'could not tell how to build this source: add a Dockerfile, or a package.json (Node), an index.html (static site) or a requirements.txt with app.py, main.py or a Procfile (Python)',
    );
  }

  let name = 'Dockerfile.slipway';
  for (let i = 2; await present(path.join(dir, name)); i++) name = `Dockerfile.slipway-${i}`;
  await writeOwnFile(path.join(dir, name), plan.generated ?? '');
  const ignore = path.join(dir, '.dockerignore');
  if (!(await present(ignore))) await writeOwnFile(ignore, '.git\nnode_modules\n');
  return { ...plan, dockerfile: name };
}
