import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The files a deployment's route reads its upstreams from, one per replica: `<dir>/<deployment id>/<replica>`, each
 * holding one `host:port` (docs/architecture.md, "Edge router"). The router reads them at every request, so changing
 * one switches traffic without a config reload. Every change is a rename over the old file: a request reads the old
 * address or the new one, never a half-written one. Ids are checked (routeId) before they reach a path here.
 */
export function createUpstreamFiles(dir: string) {
  const folder = (deploymentId: string) => path.join(dir, deploymentId);
  const file = (deploymentId: string, replica: number) => path.join(folder(deploymentId), String(replica));

  /** A new file beside the final one (same filesystem, so it can be renamed or linked there). */
  async function staged(deploymentId: string, upstream: string): Promise<string> {
    // Readable by a router running as another user; the addresses are no secret, and nothing else is written here.
    await fs.mkdir(folder(deploymentId), { recursive: true, mode: 0o755 });
    const tmp = path.join(folder(deploymentId), `.next-${randomBytes(6).toString('hex')}`);
    await fs.writeFile(tmp, `${upstream}\n`, { mode: 0o644 });
    return tmp;
  }

  const absent = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

  return {
    /** What the route's dial placeholder names for this replica. */
    path: file,

    /**
     * Replaces the files of replicas 0..n-1. Replica 0's file is written last: a route whose replica 0 has no file
     * answers the stopped page, so it turns to the proxy only once every other file is in place.
     */
    async write(deploymentId: string, upstreams: string[]): Promise<void> {
      for (let i = upstreams.length - 1; i >= 0; i--) {
        await fs.rename(await staged(deploymentId, upstreams[i]!), file(deploymentId, i));
      }
    },

    /**
     * Writes only the files that are missing: a link fails on an existing name, so a file the deployment's own
     * publish wrote meanwhile is never replaced by what a repair read before it. Returns the replicas written.
     */
    async fill(deploymentId: string, upstreams: string[]): Promise<number[]> {
      const written: number[] = [];
      for (let i = upstreams.length - 1; i >= 0; i--) {
        const tmp = await staged(deploymentId, upstreams[i]!);
        try {
          await fs.link(tmp, file(deploymentId, i));
          written.push(i);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        } finally {
          await fs.unlink(tmp);
        }
      }
      return written.reverse();
    },

    /** Each replica's address, or undefined where its file is missing or empty. */
    async read(deploymentId: string, replicas: number): Promise<(string | undefined)[]> {
      return Promise.all(
        Array.from({ length: replicas }, (_, i) =>
          fs.readFile(file(deploymentId, i), 'utf8').then(
            (text) => text.trim() || undefined,
            (err: unknown) => {
              if (absent(err)) return undefined;
              throw err;
            },
          ),
        ),
      );
    },

    /** Removes the files of replicas `from` and up (a route that shrank no longer reads them). */
    async removeFrom(deploymentId: string, from: number): Promise<void> {
      const names = await fs.readdir(folder(deploymentId)).catch((err: unknown) => {
        if (absent(err)) return [];
        throw err;
      });
      for (const name of names) {
        if (/^\d+$/.test(name) && Number(name) >= from)
          await fs.rm(path.join(folder(deploymentId), name), { force: true });
      }
    },

    /** Removes every file of the deployment, replica 0's first (from then on its route answers the stopped page). */
    async remove(deploymentId: string): Promise<void> {
      await fs.rm(file(deploymentId, 0), { force: true });
      await fs.rm(folder(deploymentId), { recursive: true, force: true });
    },
  };
}

export type UpstreamFiles = ReturnType<typeof createUpstreamFiles>;
