import path from 'node:path';

import { type Api, unwrap } from '../api';
import { packDirectory } from '../archive';
import { CliError } from '../errors';
import { followDeployment } from '../follow';
import { type Output, parseTimeout } from '../output';
import type { DeploymentView } from '../view';
import { describeFailure } from './status';

export interface DeployOptions {
  image?: string;
  dir?: string;
  git?: string;
  branch?: string;
  dockerfile?: string;
  name: string;
  port: string;
  env: string[];
  requestId?: string;
  wait?: boolean;
  timeout: string;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `K=V` sets K; a bare `K` takes K's value from this shell, as `docker run -e K` does. */
export function parseEnv(pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    if (!ENV_NAME.test(key))
      throw new CliError(`--env ${key}: not a variable name`, 'names match [A-Za-z_][A-Za-z0-9_]*');
    const value = eq === -1 ? process.env[key] : pair.slice(eq + 1);
    if (value === undefined) throw new CliError(`--env ${key}: not set in this shell`, `write --env ${key}=value`);
    env[key] = value;
  }
  return env;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new CliError(`--port ${value} is not a port`, 'give the port the app listens on, 1 to 65535');
  return port;
}

interface Accepted {
  deployment: DeploymentView;
  statusUrl: string;
}

/**
 * Sends the deploy its source asks for: an image, a Git repository, or the directory zipped and uploaded first. The
 * deploy itself goes to the platform API (the upload has no route there), so a person's deploys and destroys do not
 * spend the compatibility API's writes, which scripts and agents on that API share per organisation.
 */
async function submit(api: Api, out: Output, o: DeployOptions): Promise<Accepted> {
  const sources = [o.image, o.dir, o.git].filter((s) => s !== undefined).length;
  if (sources !== 1) throw new CliError('give exactly one source', 'use --image REF, --dir PATH or --git URL');
  if (o.branch && !o.git) throw new CliError('--branch goes with --git');
  if (o.dockerfile && o.image) throw new CliError('--dockerfile goes with --dir or --git');
  const common = {
    name: o.name,
    port: parsePort(o.port),
    envVars: parseEnv(o.env),
    ...(o.requestId ? { requestId: o.requestId } : {}),
  };
  if (o.image) return unwrap((await api.post<unknown>('/platform/deployments', { image: o.image, ...common })).body);
  let uploadId: string | undefined;
  if (o.dir) {
    const packed = await packDirectory(o.dir);
    out.info(
      `zipped ${packed.files.length} files (${(packed.zip.length / 1024).toFixed(1)} KiB) from ${path.resolve(o.dir)}` +
        `${packed.ignored ? `, ${packed.ignored} ignored` : ''}` +
        `${packed.skipped.length ? `; skipped (not regular files): ${packed.skipped.join(', ')}` : ''}`,
    );
    const form = new FormData();
    form.append('archive', new Blob([new Uint8Array(packed.zip)], { type: 'application/zip' }), 'source.zip');
    uploadId = (await api.request<{ uploadId: string }>('POST', '/compat/uploads/zip', { form })).body.uploadId;
  }
  const body = {
    ...(uploadId ? { uploadId } : { repoUrl: o.git, ...(o.branch ? { branch: o.branch } : {}) }),
    ...(o.dockerfile ? { dockerfilePath: o.dockerfile } : {}),
    ...common,
  };
  return unwrap((await api.post<unknown>('/platform/deployments', body)).body);
}

export async function deploy(api: Api, out: Output, o: DeployOptions): Promise<void> {
  const startedAt = Date.now();
  const timeoutMs = parseTimeout(o.timeout);
  const accepted = await submit(api, out, o);
  const id = accepted.deployment.id;
  if (!o.wait) {
    out.result(accepted, `deployment ${id} accepted (${accepted.deployment.status})\nfollow it: slipway status ${id}`);
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
  throw new CliError(describeFailure(final), `read more with slipway logs ${id}`, 1, final);
}
