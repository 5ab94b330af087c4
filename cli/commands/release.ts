import { ignore } from '@shared/ignore';

import { type Api, unwrap } from '../api';
import { CliError } from '../errors';
import { type CommandAccepted, eventCursor, followCommand } from '../follow';
import { type Link, linkFile } from '../link';
import { type Output, parseTimeout } from '../output';
import { checkSameApi, onTarget, readDeployment, type Target } from '../target';
import { type DeploymentView, FINAL, printable } from '../view';
import { type DeployOptions, envChange, parseEnv, parsePort, type Source, uploadFolder } from './source';
import { describeFailure } from './status';

/** An X-Request-Id the server keeps as the command's idempotency key (anything else it replaces). */
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * `slipway deploy` in a linked folder: the folder zipped and uploaded (or the image or Git source given), then the
 * platform's redeploy with that source, so the same deployment gets a new release at the same URL: no new ID, and none of the
 * creation budget spent. The environment is left as it is unless --env is given, which replaces all of it.
 */
export async function shipRelease(
  api: Api,
  out: Output,
  s: { folder: string; link: Link; source: Source; o: DeployOptions },
): Promise<void> {
  const { link, source, o } = s;
  const startedAt = Date.now();
  const timeoutMs = parseTimeout(o.timeout);
  checkSameApi(link, api.url);
  if (o.name !== undefined && o.name !== link.name)
    throw new CliError(
      `this folder is linked to ${link.name}; --name ${o.name} names another app`,
      `leave out --name to ship a new release of ${link.name}, or pass --new to create ${o.name}`,
    );
  if (o.requestId !== undefined && !REQUEST_ID.test(o.requestId))
    throw new CliError(
      `--request-id ${o.requestId}: a new release takes letters, digits and . _ : - (at most 128, a letter or digit first)`,
    );
  const target: Target = {
    id: link.deploymentId,
    name: link.name,
    link: { dir: s.folder, file: linkFile(s.folder), link },
  };
  const d = await readDeployment(api, target);
  // Refused here rather than after the upload: the server takes a new release only once the last one has settled.
  if (!FINAL.has(d.status))
    throw new CliError(
      `${link.name} is ${d.status}: a new release can ship once it is running, stopped or failed`,
      'follow it with slipway logs -f --build (or slipway status), then run slipway deploy again',
      1,
      d,
    );
  if (o.port !== undefined && parsePort(o.port) !== d.port)
    throw new CliError(
      `--port ${o.port}: ${link.name} listens on ${d.port}, set when it was created`,
      'leave out --port, or pass --new to create an app on another port',
    );
  // Read while the folder is zipped and uploaded: where the event stream ends now, so following shows only this release.
  const cursor = o.wait ? eventCursor(api, d) : undefined;
  void cursor?.catch(
    ignore('awaited below, where its failure is thrown; this only keeps it from being unhandled meanwhile'),
  );
  const envVars = o.env.length ? parseEnv(o.env) : undefined;
  const body = {
    ...(await newCode(api, out, source, o)),
    // Without it, the server builds with the deployment's own Dockerfile path (or detects one).
    ...(o.dockerfile ? { dockerfilePath: o.dockerfile } : {}),
    ...(envVars ? { envVars } : {}),
  };
  if (envVars) out.info(envChange(d.envVarNames ?? [], Object.keys(envVars).sort()));
  // Known before the release is sent: a cursor read after it would count the release's own events as older ones,
  // and the follow would wait for events that had already passed.
  const from = cursor ? await cursor : undefined;
  const r = await onTarget(target, () =>
    api.request<unknown>('POST', `/platform/deployments/${d.id}/redeploy`, {
      json: body,
      ...(o.requestId ? { headers: { 'x-request-id': o.requestId } } : {}),
    }),
  ).catch((err: unknown) => {
    throw oldServer(err, link);
  });
  const accepted = unwrap<CommandAccepted>(r.body);
  if (!o.wait) {
    out.result(
      { ...accepted, link: { file: target.link!.file } },
      `new release of ${link.name} accepted (${accepted.command.id}); it takes over at ${d.url ?? 'its URL'} once ready\n` +
        'follow it: slipway status',
    );
    return;
  }
  out.info(`new release of ${link.name} accepted; following it (Ctrl-C stops the watching, not the release)`);
  const progress = out.lines(startedAt);
  const interrupted = () => {
    progress.stop(true);
    process.stderr.write('\nstopped following; the release goes on: slipway status\n');
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  let ended: Awaited<ReturnType<typeof followCommand>>;
  try {
    ended = await followCommand(api, d.id, accepted.command, {
      progress,
      timeoutMs,
      logs: !out.json,
      ...(from ? { from } : {}),
    });
  } finally {
    process.removeListener('SIGINT', interrupted);
    progress.stop();
  }
  const final = ended.deployment;
  const took = `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
  if (ended.progress.state === 'succeeded' && final.status === 'running') {
    out.result(
      final,
      `${final.name} is running at ${final.url ?? '(no URL)'} (release r${final.revision ?? '?'}, ${took})\nID ${final.id}`,
    );
    return;
  }
  throw new CliError(
    describeRelease(final, ended.progress.message),
    'fix it and run slipway deploy again; read more with slipway logs',
    1,
    final,
  );
}

/**
 * The release's new code as the redeploy takes it: the image, the folder uploaded, or a Git source (`{}` is the
 * app's own repository and branch at their head; a URL or --branch names another).
 */
async function newCode(api: Api, out: Output, source: Source, o: DeployOptions): Promise<Record<string, unknown>> {
  if (source.kind === 'image') return { image: source.image };
  if (source.kind === 'dir') return { uploadId: await uploadFolder(api, out, source.dir) };
  return { git: { ...(source.url ? { repoUrl: source.url } : {}), ...(o.branch ? { branch: o.branch } : {}) } };
}

/**
 * Why a new release did not take over: the deployment's lastFailure (phase, message, hint, the app's last lines),
 * else the command's own message; then what serves meanwhile. A deployment that is failed as a whole says so as a
 * first deploy's failure does.
 */
export function describeRelease(d: DeploymentView, commandMessage?: string): string {
  const lf = d.lastFailure;
  if (!lf)
    return d.status === 'failed'
      ? describeFailure(d)
      : `the new release of ${d.name} failed: ${printable(commandMessage ?? 'no reason given')}`;
  const lines = [`the new release of ${d.name} failed${lf.phase ? ` (${lf.phase})` : ''}: ${printable(lf.message)}`];
  if (lf.hint) lines.push(`hint: ${printable(lf.hint)}`);
  if (lf.lastLines?.length) lines.push('last lines:', ...lf.lastLines.map((l) => `  ${printable(l)}`));
  if (d.status === 'running')
    lines.push(`release r${d.revision ?? '?'} still serves at ${d.url ?? 'its URL'}: nothing changed for its users`);
  else lines.push(`${d.name} is ${d.status}`);
  return lines.join('\n');
}

/**
 * A server from before redeploys took a new source refuses the unknown field: said as such, with the way around it,
 * rather than as a schema complaint about uploadId.
 */
function oldServer(err: unknown, link: Link): unknown {
  if (!(err instanceof CliError)) return err;
  const body = err.json as { status?: number; message?: string } | undefined;
  const unknownSource = /Unrecognized key.*"(uploadId|image|git)"|Invalid body\.envVars: .*expected record/;
  if (body?.status !== 400 || !unknownSource.test(body.message ?? '')) return err;
  return new CliError(
    `${link.apiUrl} cannot ship a new release from a new source (${err.message})`,
    `update the server, or pass --new to create a new app (${link.name} stays as it is)`,
    1,
    err.json,
  );
}
