import fs from 'node:fs/promises';
import path from 'node:path';

import dockerignore from '@balena/dockerignore';
import ignore, { type Ignore } from 'ignore';
import yazl from 'yazl';

import { ifAbsent } from '@shared/ignore';

import { CliError } from './errors';
import { LINK_DIR } from './link';

export interface Packed {
  zip: Buffer;
  files: string[];
  /** Paths left out by .gitignore or .dockerignore (directories count once). */
  ignored: number;
  /** Symlinks and other non-regular files: never followed, so a link cannot carry a file from outside the dir. */
  skipped: string[];
}

/** Docker reads these even when its own rules exclude them, as `docker build` sends them. */
const ALWAYS = new Set(['Dockerfile', '.dockerignore']);

/**
 * The directory as `slipway deploy --dir` uploads it: every regular file, minus `.git/`, `.slipway/` folders, what
 * the .gitignore files exclude (git's rules, nested files included, deeper ones winning) and what the root
 * .dockerignore excludes (Docker's rules). What a developer keeps out of the repository or the image (.env, keys, node_modules) never
 * leaves the machine.
 */
export async function packDirectory(dir: string): Promise<Packed> {
  const root = path.resolve(dir);
  const stat = await fs.stat(root).catch(ifAbsent(undefined));
  if (!stat?.isDirectory()) throw new CliError(`${dir} is not a directory`, 'give --dir the folder of the app');
  const dockerRules = await fs.readFile(path.join(root, '.dockerignore'), 'utf8').catch(ifAbsent(''));
  const docker = dockerignore({ ignorecase: false }).add(dockerRules);
  // Without exceptions, a directory Docker ignores holds nothing to keep: its walk is skipped.
  const dockerPrunes = !/^\s*!/m.test(dockerRules);
  const gitignores: { base: string; rules: Ignore }[] = [];

  const files: string[] = [];
  const skipped: string[] = [];
  let ignored = 0;

  const gitIgnores = (rel: string) => {
    let verdict = false;
    for (const g of gitignores) {
      if (g.base && !rel.startsWith(`${g.base}/`)) continue;
      const r = g.rules.test(g.base ? rel.slice(g.base.length + 1) : rel);
      if (r.ignored) verdict = true;
      else if (r.unignored) verdict = false;
    }
    return verdict;
  };

  async function walk(relDir: string): Promise<void> {
    const abs = path.join(root, relDir);
    const own = await fs.readFile(path.join(abs, '.gitignore'), 'utf8').catch(ifAbsent(undefined));
    const pushed = own !== undefined;
    if (pushed) gitignores.push({ base: relDir, rules: ignore().add(own) });
    const entries = (await fs.readdir(abs, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const rel = relDir ? `${relDir}/${e.name}` : e.name;
      if (e.isDirectory()) {
        // A folder's link to its app (link.ts) is the developer's, never the app's, whatever the ignore files say.
        if (
          rel === '.git' ||
          e.name === LINK_DIR ||
          gitIgnores(`${rel}/`) ||
          (dockerPrunes && docker.ignores(`${rel}/`))
        )
          ignored++;
        else await walk(rel);
      } else if (e.isFile()) {
        if (!ALWAYS.has(rel) && (gitIgnores(rel) || docker.ignores(rel))) ignored++;
        else files.push(rel);
      } else {
        skipped.push(rel);
      }
    }
    if (pushed) gitignores.pop();
  }
  await walk('');
  if (files.length === 0) throw new CliError(`nothing to upload in ${dir}`, 'check its .gitignore and .dockerignore');
  return { zip: await zipFiles(root, files), files, ignored, skipped };
}

function zipFiles(root: string, files: string[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const f of files) zip.addFile(path.join(root, f), f);
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}
