import fs from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';

import { ignore } from '../ignore';

/**
 * The npm package names a source uses, for telling a misspelt dependency from a missing one: the packages its
 * code imports first (the surest sign of what was meant), then the ones its package.json lists (`@types/x` also
 * meaning `x`). Read from the build's own copy of the source, within fixed bounds; nothing is fetched.
 */

const CODE = /\.(?:[cm]?js|jsx|[cm]?ts|tsx|vue|svelte)$/;
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'out', '.next', 'coverage']);
const MAX_FILES = 400;
const MAX_DEPTH = 6;
const MAX_FILE_BYTES = 256 * 1024;
/** `require('x')`, `import('x')`, `from 'x'`, `import 'x'`. */
const SPECIFIER = /(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)(['"])([^'"\s]+)\1/g;

const builtins = new Set(builtinModules);

/** The package a bare specifier names (`lodash/fp` → `lodash`, `@a/b/c` → `@a/b`); undefined for paths and builtins. */
export function packageOfSpecifier(specifier: string): string | undefined {
  if (/^(?:[./]|[a-z][a-z0-9+.-]*:)/i.test(specifier)) return undefined;
  const name = specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
  return builtins.has(name) ? undefined : name;
}

/** Read on a failed build's path, to suggest a name: what cannot be read is left out, never the failure itself. */
const SUGGESTION_ONLY = 'these names only feed a spelling suggestion';

async function codeFiles(dir: string, depth = 0, out: string[] = []): Promise<string[]> {
  if (depth > MAX_DEPTH || out.length >= MAX_FILES) return out;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(ignore(SUGGESTION_ONLY, []));
  for (const e of entries) {
    if (out.length >= MAX_FILES) break;
    // Symbolic links are not followed: the source is the tenant's, and a link may point anywhere.
    if (e.isDirectory() && !SKIPPED_DIRS.has(e.name)) await codeFiles(path.join(dir, e.name), depth + 1, out);
    else if (e.isFile() && CODE.test(e.name)) out.push(path.join(dir, e.name));
  }
  return out;
}

async function importedNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (const file of await codeFiles(dir)) {
    const stat = await fs.lstat(file).catch(ignore(SUGGESTION_ONLY));
    if (!stat?.isFile() || stat.size > MAX_FILE_BYTES) continue;
    const text = await fs.readFile(file, 'utf8').catch(ignore(SUGGESTION_ONLY, ''));
    for (const m of text.matchAll(SPECIFIER)) {
      const name = packageOfSpecifier(m[2]!);
      if (name) names.push(name);
    }
  }
  return names;
}

async function listedNames(dir: string): Promise<string[]> {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return []; // no package.json, or not JSON: nothing listed to compare with
  }
  const names: string[] = [];
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    const deps = pkg?.[field];
    if (!deps || typeof deps !== 'object') continue;
    for (const name of Object.keys(deps)) {
      names.push(name);
      // @types/node is node's types; @types/babel__core is @babel/core's.
      const typed = /^@types\/(.+)$/.exec(name)?.[1];
      if (typed) names.push(typed.includes('__') ? `@${typed.replace('__', '/')}` : typed);
    }
  }
  return names;
}

/** The names `dir`'s source uses, imports first, each once. */
export async function sourcePackageNames(dir: string): Promise<string[]> {
  return [...new Set([...(await importedNames(dir)), ...(await listedNames(dir))])];
}
