import path from 'node:path';

import {
  APP_USER,
  BuildPlanError,
  cmd,
  exists,
  type PlanOptions,
  readText,
  type StackPlan,
  STAGE_CA,
  USER_LINE,
  withBuildOnly,
} from './plan-common';
import type { BuildRegistries } from './registries';

/**
 * Whether a requirements file lists `name` (a line of its own) or a pyproject.toml does (a quoted entry of a
 * dependencies array), extras and version specifiers allowed.
 */
function lists(requirements: string, name: string): boolean {
  return new RegExp(`(^\\s*|["'])${name}(\\[[^\\]]*\\])?\\s*(["',;<>=!~ ]|$)`, 'im').test(requirements);
}

/** The module and variable of a WSGI/ASGI application object in one of `files`, e.g. `app:app`. */
async function appObject(dir: string, files: string[], constructors: RegExp): Promise<string | undefined> {
  for (const file of files) {
    const text = await readText(dir, file);
    if (text === undefined) continue;
    const module = file.replace(/\.py$/, '');
    const made = new RegExp(`^(\\w+)\\s*=\\s*(?:\\w+\\.)?(?:${constructors.source})\\(`, 'm').exec(text);
    if (made) return `${module}:${made[1]}`;
    const named = /^(app|application)\s*=/m.exec(text);
    if (named) return `${module}:${named[1]}`;
  }
  return undefined;
}

/** How the app starts: a Procfile `web:` line, gunicorn or uvicorn serving an app object, else app.py or main.py. */
async function startOf(dir: string, requirements: string, port: number): Promise<string[] | undefined> {
  const procfile = await readText(dir, 'Procfile');
  const web = procfile ? /^web:\s*(.+)$/m.exec(procfile)?.[1]?.trim() : undefined;
  if (web) return ['sh', '-c', web];
  if (lists(requirements, 'gunicorn')) {
    const app = await appObject(
      dir,
      ['wsgi.py', 'app.py', 'main.py', 'application.py', 'server.py'],
      /Flask|get_wsgi_application|Bottle|Falcon|App/,
    );
    if (app) return ['gunicorn', '--bind', `0.0.0.0:${port}`, '--access-logfile', '-', app];
  }
  if (lists(requirements, 'uvicorn')) {
    const app = await appObject(
      dir,
      ['main.py', 'app.py', 'asgi.py', 'server.py', 'application.py'],
      /FastAPI|Starlette|Quart|Litestar/,
    );
    if (app) return ['uvicorn', app, '--host', '0.0.0.0', '--port', String(port)];
  }
  for (const file of ['app.py', 'main.py']) if (await exists(path.join(dir, file))) return ['python', file];
  return undefined;
}

/**
 * A Python project: requirements.txt (or a pyproject.toml project) installed into a virtual environment at
 * /opt/venv in a build stage, then the environment and the app copied into the final stage.
 */
export async function pythonPlan(dir: string, opts: PlanOptions, registries: BuildRegistries): Promise<StackPlan> {
  const requirements = await readText(dir, 'requirements.txt');
  const pyproject = requirements === undefined ? await readText(dir, 'pyproject.toml') : undefined;
  const listed = requirements ?? pyproject ?? '';
  const start = await startOf(dir, listed, opts.port);
  if (!start) {
    const served = ['gunicorn', 'uvicorn'].find((s) => lists(listed, s));
    throw new BuildPlanError(
      served
        ? `${served} is listed but no module defines an app object (app = …) for it; add app.py with one, or a Procfile with a web: line`
        : `${requirements !== undefined ? 'requirements.txt' : 'pyproject.toml'} found but nothing to run: add app.py, main.py or a Procfile with a web: line`,
    );
  }
  const install =
    requirements !== undefined ? 'pip install --no-cache-dir -r requirements.txt' : 'pip install --no-cache-dir .';
  // The slipway/python base has this environment already; a public python image gets one here.
  const venv = [
    'RUN test -x /opt/venv/bin/pip || python3 -m venv /opt/venv',
    'ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  ];
  const lines = [
    `FROM ${opts.baseImages.python} AS build`,
    ...venv,
    'WORKDIR /app',
    'COPY . .',
    ...withBuildOnly(install, {
      PIP_CERT: registries.caBundle ? STAGE_CA : undefined,
      PIP_INDEX_URL: registries.pipIndexUrl,
      PIP_EXTRA_INDEX_URL: registries.pipExtraIndexUrls?.join(' '),
    }),
    '',
    `FROM ${opts.baseImages.python}`,
    venv[1]!,
    'WORKDIR /app',
    'COPY --from=build /opt/venv /opt/venv',
    // Owned by the app user: apps write beside their code as they run (SQLite, uploads, caches).
    `COPY --from=build --chown=${APP_USER} /app /app`,
    `ENV PORT=${opts.port} PYTHONUNBUFFERED=1`,
    `EXPOSE ${opts.port}`,
    USER_LINE,
    cmd(start),
  ];
  return { kind: 'python', lines, steps: [install.replace(' --no-cache-dir', ''), start.join(' ')], installs: true };
}
