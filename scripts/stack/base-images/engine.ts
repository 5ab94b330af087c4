import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';

import type Docker from 'dockerode';

import { StackError } from '../stack-error';
import { baseImageLabels, filesUnder, IMAGES_DIR } from './catalogue';

/** The engine's side of Slipway's images: is one there, import the Debian root, build an image on it, tag `latest`. */

/** The engine's image of that name, or undefined when it has none (404); any other failure is thrown. */
export const inspectIfPresent = (docker: Docker, tag: string) =>
  docker
    .getImage(tag)
    .inspect()
    .catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return undefined;
      throw err;
    });

export const absent = async (docker: Docker, tag: string) => (await inspectIfPresent(docker, tag)) === undefined;

/** Points `<repo>:latest` at `tag`, so a user's Dockerfile can say `FROM slipway/node`. */
export async function tagLatest(docker: Docker, tag: string): Promise<void> {
  const [repo] = tag.split(':');
  const [want, latest] = await Promise.all([
    docker.getImage(tag).inspect(),
    inspectIfPresent(docker, `${repo}:latest`),
  ]);
  if (latest?.Id !== want.Id) await docker.getImage(tag).tag({ repo: repo!, tag: 'latest' });
}

/** `tar | docker import` of the root file system in `root` as `tag`, labelled as a base, with a shell's defaults. */
export async function importRootfs(docker: Docker, root: string, tag: string, signal?: AbortSignal): Promise<void> {
  const tar = spawn('tar', ['--numeric-owner', '-C', root, '-c', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const changes = [
    ...Object.entries(baseImageLabels('debian', tag)).map(
      ([k, v]) => `LABEL ${JSON.stringify(k)}=${JSON.stringify(v)}`,
    ),
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8',
    'CMD ["bash"]',
  ];
  const [repo, version] = tag.split(':');
  const stream = (await docker.importImage(tar.stdout as unknown as string, {
    repo,
    tag: version,
    changes,
    ...(signal ? { abortSignal: signal } : {}),
  })) as Readable;
  await follow(docker, stream, () => undefined, `importing ${tag}`);
}

/** What one image on the Debian base is built from: its directory under scripts/images, its tag and labels. */
export interface ImageRecipe {
  name: string;
  tag: string;
  labels: Record<string, string>;
}

/** Builds `recipe` from its directory under scripts/images (every file of it is the context), on the Debian base. */
export async function buildOnDebian(
  docker: Docker,
  recipe: ImageRecipe,
  debianTag: string,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const context = path.join(IMAGES_DIR, recipe.name);
  const stream = await docker.buildImage(
    { context, src: filesUnder(context).map(([rel]) => rel) },
    {
      t: recipe.tag,
      buildargs: { BASE: debianTag },
      labels: recipe.labels,
      rm: true,
      forcerm: true,
      ...(signal ? { abortSignal: signal } : {}),
    },
  );
  await follow(docker, stream, (line) => progress(`${recipe.name}: ${line}`), `building ${recipe.tag}`);
}

/** Follows an engine progress stream to its end; an `error` in it rejects with the engine's words (a script). */
function follow(docker: Docker, stream: NodeJS.ReadableStream, line: (l: string) => void, what: string) {
  return new Promise<void>((resolve, reject) => {
    let failed: string | undefined;
    docker.modem.followProgress(
      stream,
      (err) => {
        const why = err instanceof Error ? err.message : (err as string | null) || failed;
        if (why) reject(new StackError(`${what} failed: ${why}`));
        else resolve();
      },
      (msg: { stream?: string; status?: string; error?: string }) => {
        if (msg.error) failed = msg.error;
        const text = (msg.stream ?? '').trim();
        if (text) for (const l of text.split('\n')) if (l.trim()) line(l.trim());
      },
    );
  });
}
