import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';

import type Docker from 'dockerode';

import type { BaseImageName } from '@shared/build/base-images';

import { StackError } from '../stack-error';
import { type AllBases, baseImageLabels, IMAGES_DIR } from './catalogue';

/** The engine's side of the base images: is one there, import the Debian root, build a base on it, tag `latest`. */

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

/** Builds the base `name` from its Dockerfile under scripts/images, on the Debian base `tags.debian`. */
export async function buildBase(
  docker: Docker,
  name: BaseImageName,
  tags: Record<AllBases, string>,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const stream = await docker.buildImage(
    { context: path.join(IMAGES_DIR, name), src: ['Dockerfile'] },
    {
      t: tags[name],
      buildargs: { BASE: tags.debian },
      labels: baseImageLabels(name, tags[name]),
      rm: true,
      forcerm: true,
      ...(signal ? { abortSignal: signal } : {}),
    },
  );
  await follow(docker, stream, (line) => progress(`${name}: ${line}`), `building ${tags[name]}`);
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
