import fs from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../ignore';

/** A symlink in a source tree that leads out of it. */
export class SymlinkEscapeError extends Error {
  override name = 'SymlinkEscapeError';
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/**
 * Where a symlink's target really leads, followed one component at a time as the kernel would: `..` after a
 * component that is itself a link climbs from that link's target, which a purely textual resolve gets wrong
 * (`x -> d/l/../etc` with `d/l -> ..` reads as inside but is not). Missing components are taken as written.
 */
async function realTarget(linkDir: string, target: string, hops = 0): Promise<string | undefined> {
  if (hops > 40) return undefined; // a loop; the kernel gives up too
  let cur = path.isAbsolute(target) ? '/' : linkDir;
  let missing = false;
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      cur = path.dirname(cur);
      continue;
    }
    const next = path.join(cur, part);
    const stat = missing ? undefined : await fs.lstat(next).catch(ifAbsent(undefined));
    if (!stat) {
      missing = true;
      cur = next;
    } else if (stat.isSymbolicLink()) {
      const resolved = await realTarget(cur, await fs.readlink(next), hops + 1);
      if (resolved === undefined) return undefined;
      cur = resolved;
    } else cur = next;
  }
  return cur;
}

/**
 * Refuses a source tree holding a symlink that leads outside it, dangling or not: the build reads files of the
 * tree (package.json, the Dockerfile) and writes a few of its own, and neither may reach the worker's files.
 */
export async function assertSymlinksInside(root: string): Promise<void> {
  const realRoot = await fs.realpath(root);
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(at);
      else if (entry.isSymbolicLink()) {
        const target = await fs.readlink(at);
        const leadsTo = await realTarget(await fs.realpath(dir), target);
        if (leadsTo === undefined || !inside(realRoot, leadsTo)) {
          throw new SymlinkEscapeError(
            `${path.relative(root, at)} is a symlink to ${JSON.stringify(target)}, which leads outside the source; remove it or point it inside`,
          );
        }
      }
    }
  };
  await walk(root);
}

/** Whether anything, a dangling symlink included, is at `file`. */
export const present = (file: string) => fs.lstat(file).then(() => true, ifAbsent(false));

/** Writes a file of our own at `file`, replacing a symlink there rather than writing through it. */
export async function writeOwnFile(file: string, content: string): Promise<void> {
  const stat = await fs.lstat(file).catch(ifAbsent(undefined));
  if (stat?.isSymbolicLink()) await fs.unlink(file);
  await fs.writeFile(file, content);
}
