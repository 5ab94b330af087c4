import fs from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../ignore';
import { writeOwnFile } from './symlinks';

/** Where the labelled copy goes, at the context root; .dockerignore keeps it out of `COPY . .`. */
export const LABELLED_DOCKERFILE = '.slipway.Dockerfile';

/**
 * Writes a copy of `dockerfile` (relative to `dir`) that ends in one LABEL instruction carrying `labels`, and
 * returns its name. The engine's classic builder turns each label passed to the build API into its own LABEL
 * step, each committing a container: one line costs one step instead of one per label. Appended, it applies
 * to the final stage of a multi-stage build, which is the image we run.
 */
export async function labelledDockerfile(dir: string, dockerfile: string, labels: Record<string, string>) {
  const original = await fs.readFile(path.join(dir, dockerfile), 'utf8');
  const label = Object.entries(labels)
    .map(([k, v]) => `${JSON.stringify(k)}=${JSON.stringify(v)}`)
    .join(' ');
  await writeOwnFile(path.join(dir, LABELLED_DOCKERFILE), `${original.replace(/\n*$/, '\n')}LABEL ${label}\n`);
  const ignore = path.join(dir, '.dockerignore');
  const rules = await fs.readFile(ignore, 'utf8').catch(ifAbsent(''));
  // Last, so no `!` rule of the source's can bring it back.
  await writeOwnFile(ignore, `${rules.replace(/\n*$/, rules ? '\n' : '')}${LABELLED_DOCKERFILE}\n`);
  return LABELLED_DOCKERFILE;
}
