import path from 'node:path';

import { type Api, unwrap } from '../api';
import { CliError } from '../errors';
import { followDeployment } from '../follow';
import { type Link, readLink, writeLink, type Written } from '../link';
import { type Output, parseTimeout } from '../output';
import type { DeploymentView } from '../view';
import { shipRelease } from './release';
import { baseNameOf, type DeployOptions, nameFrom, parseEnv, parsePort, type Source, uploadFolder } from './source';
import { describeFailure } from './status';

export type { DeployOptions, Source } from './source';

function sourceOf(o: DeployOptions): Source {
  const given = [o.image, o.dir, o.git].filter((s) => s !== undefined).length;
  if (given > 1)
    throw new CliError('give one source at most', 'use --image REF, --dir PATH or --git URL (or none: this folder)');
  if (o.branch && !o.git) throw new CliError('--branch goes with --git');
  if (o.dockerfile && o.image) throw new CliError('--dockerfile goes with a folder or --git');
  if (o.image !== undefined) return { kind: 'image', image: o.image };
  if (o.git !== undefined) return { kind: 'git', ...(typeof o.git === 'string' ? { url: o.git } : {}) };
  return { kind: 'dir', dir: o.dir ?? '.' };
}

/**
 * `slipway deploy`: in a folder linked to an app, a new release of that app (same ID, same URL; see release.ts);
 * anywhere else, or with --new, a new app, and the folder is linked to it. The folder is --dir's, or the one it runs
 * in, whatever the source: an image or a repository deployed from a folder is that folder's app.
 */
export async function deploy(api: Api, out: Output, o: DeployOptions): Promise<void> {
  const source = sourceOf(o);
  const folder = path.resolve(source.kind === 'dir' ? source.dir : '.');
  const link = await readLink(folder);
  if (link && !o.new) return shipRelease(api, out, { folder, link, source, o });
  return create(api, out, { folder, previous: link, source, o });
}

interface Accepted {
  deployment: DeploymentView;
  statusUrl: string;
}

async function create(
  api: Api,
  out: Output,
  c: { folder: string; previous: Link | undefined; source: Source; o: DeployOptions },
): Promise<void> {
  const { folder, source, o } = c;
  const startedAt = Date.now();
  const timeoutMs = parseTimeout(o.timeout);
  if (source.kind === 'git' && !source.url)
    throw new CliError(
      `--git without a URL rebuilds a linked app's own repository, and ${folder} is not linked`,
      'give the repository: --git URL',
    );
  const name = o.name ?? defaultName(source, folder);
  const common = {
    name,
    port: parsePort(o.port ?? '8080'),
    envVars: parseEnv(o.env),
    ...(o.requestId ? { requestId: o.requestId } : {}),
  };
  // The deploy itself goes to the platform API, so a person's deploys do not spend the compatibility API's writes,
  // which the organisation's scripts and agents share.
  let body: Record<string, unknown>;
  if (source.kind === 'image') body = { image: source.image, ...common };
  else
    body = {
      ...(source.kind === 'dir'
        ? { uploadId: await uploadFolder(api, out, source.dir) }
        : { repoUrl: source.url, ...(o.branch ? { branch: o.branch } : {}) }),
      ...(o.dockerfile ? { dockerfilePath: o.dockerfile } : {}),
      ...common,
    };
  const accepted = unwrap<Accepted>((await api.post<unknown>('/platform/deployments', body)).body);
  const id = accepted.deployment.id;
  // Linked as soon as the app exists: a Ctrl-C while following, or a failed first deploy, still leaves the folder
  // pointing at it, so the next deploy fixes this app instead of making another.
  const written = await linkFolder(out, folder, { deploymentId: id, name, apiUrl: api.url }, c.previous, source);
  if (!o.wait) {
    out.result(
      { ...accepted, link: { file: written.file } },
      `deployment ${id} accepted (${accepted.deployment.status})\nfollow it: slipway status`,
    );
    return;
  }
  out.info(`deployment ${id} accepted`);
  const progress = out.progress(startedAt);
  progress.deployment(accepted.deployment);
  // Ctrl-C stops the watching, not the deployment: say so, and leave the terminal as it was (cursor shown).
  const interrupted = () => {
    progress.stop(true);
    process.stderr.write(`\nstopped following; the deployment goes on: slipway status ${id}\n`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  let final: DeploymentView;
  try {
    final = await followDeployment(api, id, { progress, timeoutMs, logs: !out.json });
  } finally {
    process.removeListener('SIGINT', interrupted);
    progress.stop();
  }
  const took = `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
  if (final.status === 'running') {
    out.result(final, `${final.name} is running at ${final.url ?? '(no URL)'} (${took})\nID ${id}`);
    return;
  }
  throw new CliError(
    describeFailure(final),
    `fix it and run slipway deploy here again (a new release of ${name}); read more with slipway logs ${id}`,
    1,
    final,
  );
}

function defaultName(source: Source, folder: string): string {
  const base = baseNameOf({
    folder,
    ...(source.kind === 'image' ? { image: source.image } : {}),
    ...(source.kind === 'git' ? { git: source.url } : {}),
  });
  const name = nameFrom(base);
  if (!name) throw new CliError(`cannot make a deployment name from "${base}"`, 'give one with --name');
  return name;
}

async function linkFolder(
  out: Output,
  folder: string,
  link: Link,
  previous: Link | undefined,
  source: Source,
): Promise<Written> {
  const written = await writeLink(folder, link);
  const ignored = written.ignoredIn.length ? `; .slipway/ added to ${written.ignoredIn.join(' and ')}` : '';
  const how = {
    dir: 'slipway deploy here now ships this folder as a new release of it',
    image: 'slipway deploy --image REF here now ships that image as a new release of it',
    git: "slipway deploy --git here now rebuilds its repository's head as a new release of it",
  }[source.kind];
  out.info(
    `linked ${folder} to ${link.name} (${path.relative(folder, written.file)}${ignored}): ${how}, at the same URL`,
  );
  if (previous && previous.deploymentId !== link.deploymentId)
    out.info(
      `the folder was linked to ${previous.name} (${previous.deploymentId}), which keeps running: ` +
        `slipway destroy ${previous.deploymentId} when it is no longer needed`,
    );
  return written;
}
