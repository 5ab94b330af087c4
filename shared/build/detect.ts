import fs from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../ignore';
import { nodePlan } from './detect-node';
import { pythonPlan } from './detect-python';
import {
  type BuildPlan,
  BuildPlanError,
  exists,
  type PlanOptions,
  type StackPlan,
  staticSiteLines,
} from './plan-common';
import { BUILD_ONLY_DIR, type BuildRegistries, processRegistries } from './registries';
import { present, writeOwnFile } from './symlinks';

export { type BuildPlan, BuildPlanError, type PlanOptions } from './plan-common';

function staticPlan(opts: PlanOptions): StackPlan {
  return {
    kind: 'static',
    lines: staticSiteLines(opts.baseImages.static, opts.port),
    steps: ['copy the site', 'httpd'],
    installs: false,
  };
}

/**
 * Puts the files only the install step may see under .slipway-build/ (the host's CA bundle), and makes sure the
 * context carries them whatever the source's .dockerignore says, while the generated Dockerfile stays out of
 * `COPY . .`. The build stage deletes the folder before anything reaches the final stage.
 */
async function prepareContext(dir: string, dockerfile: string, registries: BuildRegistries): Promise<void> {
  const buildOnly = path.join(dir, BUILD_ONLY_DIR);
  await fs.rm(buildOnly, { recursive: true, force: true });
  if (registries.caBundle) {
    await fs.mkdir(buildOnly);
    await fs.copyFile(registries.caBundle, path.join(buildOnly, 'ca.pem'));
  }
  const ignore = path.join(dir, '.dockerignore');
  const rules = (await present(ignore))
    ? await fs.readFile(ignore, 'utf8').catch(ifAbsent(''))
    : '.git\nnode_modules\n';
  // Last, so they win over any rule of the source's.
  const ours = [dockerfile, `!${BUILD_ONLY_DIR}`, `!${BUILD_ONLY_DIR}/**`];
  await writeOwnFile(ignore, `${rules.replace(/\n*$/, rules ? '\n' : '')}${ours.join('\n')}\n`);
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

  const registries = opts.registries ?? processRegistries();
  let plan: StackPlan;
  if (await exists(path.join(dir, 'package.json'))) plan = await nodePlan(dir, opts, registries);
  else if (await exists(path.join(dir, 'index.html'))) plan = staticPlan(opts);
  else if ((await exists(path.join(dir, 'requirements.txt'))) || (await exists(path.join(dir, 'pyproject.toml')))) {
    plan = await pythonPlan(dir, opts, registries);
  } else {
    throw new BuildPlanError(
      'could not tell how to build this source: add a Dockerfile, or a package.json (Node), an index.html (static site) or a requirements.txt or pyproject.toml with app.py, main.py or a Procfile (Python)',
    );
  }

  let name = 'Dockerfile.slipway';
  for (let i = 2; await present(path.join(dir, name)); i++) name = `Dockerfile.slipway-${i}`;
  const generated = `${plan.lines.join('\n')}\n`;
  await writeOwnFile(path.join(dir, name), generated);
  await prepareContext(dir, name, plan.installs ? registries : {});
  return { kind: plan.kind, dockerfile: name, generated, steps: plan.steps };
}
