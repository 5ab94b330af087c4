import fs from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../ignore';
import { APP_USER } from './base-images';
import { BUILD_ONLY_DIR, type BuildRegistries } from './registries';

/** A source we cannot tell how to build; the message says what to add. */
export class BuildPlanError extends Error {
  override name = 'BuildPlanError';
}

export type StackKind = 'node' | 'static' | 'python';

export interface BuildPlan {
  kind: 'dockerfile' | StackKind;
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
  /** How the dependency step reaches the registries; the worker host's own settings when absent. */
  registries?: BuildRegistries;
}

/** A generated plan before it is written: the Dockerfile's lines, and the build-only files the install needs. */
export interface StackPlan {
  kind: StackKind;
  lines: string[];
  steps: string[];
  /** Whether a step installs dependencies from a registry (and so gets the build-only settings). */
  installs: boolean;
}

export const exists = (file: string) => fs.stat(file).then((s) => s.isFile(), ifAbsent(false));

export const dirExists = (dir: string) => fs.stat(dir).then((s) => s.isDirectory(), ifAbsent(false));

export { APP_USER } from './base-images';

/** The final stage's user (base-images.ts); the build stage's steps still run as root, as installs expect. */
export const USER_LINE = `USER ${APP_USER}`;

export const cmd = (args: string[]) => `CMD [${args.map((a) => JSON.stringify(a)).join(', ')}]`;

/** Where the CA bundle lands in a build stage (the context is copied to /app there). */
export const STAGE_CA = `/app/${BUILD_ONLY_DIR}/ca.pem`;

/**
 * The install step wrapped in the build-only settings: `ENV` with the CA bundle and registries before it, and after
 * it the build-only files leave the stage (so no later step, and nothing copied into the final stage, can carry
 * them) and the variables pointing at them are emptied. Just the step when there is nothing to set.
 */
export function withBuildOnly(install: string, vars: Record<string, string | undefined>): string[] {
  const set = Object.entries(vars).filter((e): e is [string, string] => !!e[1]);
  if (set.length === 0) return [`RUN ${install}`];
  const quote = (v: string) => (/^[\w./:@%+,-]+$/.test(v) ? v : JSON.stringify(v));
  return [
    `ENV ${set.map(([k, v]) => `${k}=${quote(v)}`).join(' ')}`,
    `RUN ${install}`,
    `RUN rm -rf ${BUILD_ONLY_DIR}`,
    `ENV ${set.map(([k]) => `${k}=`).join(' ')}`,
  ];
}

/** `busybox httpd` serving `root` in the foreground on `port`, logging each request. */
export const httpdCmd = (port: number, root = '/srv/www') =>
  cmd(['busybox', 'httpd', '-f', '-v', '-p', String(port), '-h', root]);

/** A site copied as is, served by busybox httpd as the app user. */
export const staticSiteLines = (base: string, port: number) => [
  `FROM ${base}`,
  'COPY . /srv/www',
  `EXPOSE ${port}`,
  USER_LINE,
  httpdCmd(port),
];

/** The file's text; undefined when there is no such file (a folder of that name is none). */
export const readText = (dir: string, name: string) =>
  fs.readFile(path.join(dir, name), 'utf8').catch(ifAbsent(undefined));
