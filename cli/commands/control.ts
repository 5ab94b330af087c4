import { type Api, unwrap } from '../api';
import { CliError } from '../errors';
import { type CommandAccepted, type CommandProgress, eventCursor, followCommand } from '../follow';
import { type Output, parseTimeout } from '../output';
import { isDeploymentId, onTarget, readDeployment, type Target } from '../target';
import type { DeploymentView } from '../view';
import { describeRelease } from './release';
import { ENV_NAME, envChange, parseEnv } from './source';

export interface ControlOptions {
  wait?: boolean;
  timeout: string;
}

/** `env` is the environment change (PATCH …/env), which the server carries out as a redeploy. */
type CommandName = 'stop' | 'start' | 'scale' | 'redeploy' | 'rollback' | 'env';

interface Wording {
  /** "rollback to r3", "scale to 2 instances": what was asked, for the accepted line. */
  asked: string;
  /** The line once it has succeeded. */
  done(p: CommandProgress, d: DeploymentView): string;
  /** What the accepted answer adds for a person, said before following it. */
  note?(accepted: CommandAccepted): string;
}

/**
 * Sends one of the deployment's commands; the server answers once its workflow has accepted it (or 400 naming the
 * status and the commands it accepts). With --wait, follows it to its end (see followCommand): exit 0 when it
 * succeeded, 1 with why when it failed (a redeploy or rollback says what still serves), 2 after --timeout.
 */
async function send(
  api: Api,
  out: Output,
  target: Target,
  name: CommandName,
  body: unknown,
  o: ControlOptions,
  words: Wording,
  before?: DeploymentView,
): Promise<void> {
  const startedAt = Date.now();
  const timeoutMs = parseTimeout(o.timeout);
  // Where the event stream ends before the command, so following it shows what it does and nothing older.
  const from = o.wait ? await eventCursor(api, before ?? (await readDeployment(api, target))) : undefined;
  const r = await onTarget(target, () =>
    api.request<unknown>(name === 'env' ? 'PATCH' : 'POST', `/platform/deployments/${target.id}/${name}`, {
      json: body,
    }),
  );
  const accepted = unwrap<CommandAccepted>(r.body);
  const app = accepted.deployment.name;
  const again = target.link ? 'slipway status' : `slipway status ${target.id}`;
  if (!o.wait) {
    out.result(
      accepted,
      `${words.asked} of ${app} accepted (${accepted.command.id})${words.note ? `\n${words.note(accepted)}` : ''}` +
        `\nfollow it: ${again}`,
    );
    return;
  }
  out.info(`${words.asked} of ${app} accepted; following it`);
  if (words.note) out.info(words.note(accepted));
  const progress = out.lines(startedAt);
  let ended: Awaited<ReturnType<typeof followCommand>>;
  try {
    ended = await followCommand(api, target.id, accepted.command, {
      progress,
      timeoutMs,
      logs: !out.json,
      ...(from ? { from } : {}),
    });
  } finally {
    progress.stop();
  }
  const { progress: p, deployment: d } = ended;
  if (p.state === 'succeeded') {
    out.result(p, words.done(p, d));
    return;
  }
  const why =
    name === 'redeploy' || name === 'rollback' || name === 'env'
      ? describeRelease(d, p.message)
      : `the ${name} of ${app} failed: ${p.message ?? 'no reason given'}`;
  throw new CliError(why, `${again} shows where it stands`, 1, p);
}

export async function stop(api: Api, out: Output, target: Target, o: ControlOptions): Promise<void> {
  await send(api, out, target, 'stop', {}, o, {
    asked: 'stop',
    done: (_p, d) => `${d.name} is stopped; its URL answers 503 until slipway start`,
  });
}

export async function start(api: Api, out: Output, target: Target, o: ControlOptions): Promise<void> {
  await send(api, out, target, 'start', {}, o, {
    asked: 'start',
    done: (_p, d) => `${d.name} is running again at ${d.url ?? '(no URL)'} (release r${d.revision ?? '?'})`,
  });
}

/** `scale [ID|NAME] N`: with one argument, it is N and the deployment is the folder's link. */
export function scaleArgs(first: string | undefined, second: string | undefined): { given?: string; replicas: number } {
  const [given, raw] = second === undefined ? [undefined, first] : [first, second];
  if (raw === undefined)
    throw new CliError('give the number of instances', 'slipway scale [ID|NAME] N, e.g. slipway scale 2');
  if (!/^\d{1,4}$/.test(raw))
    throw new CliError(`${raw} is not a number of instances`, 'give 0 (the same as stop) or more');
  return { ...(given !== undefined ? { given } : {}), replicas: Number(raw) };
}

export async function scale(api: Api, out: Output, target: Target, replicas: number, o: ControlOptions) {
  const n = (k: number) => `${k} instance${k === 1 ? '' : 's'}`;
  await send(api, out, target, 'scale', { replicas }, o, {
    asked: `scale to ${n(replicas)}`,
    done: (p, d) => `${d.name} runs ${n(p.outcome?.replicas ?? replicas)} of release r${p.outcome?.revision ?? '?'}`,
  });
}

/**
 * With --env, a new release with a new environment, which replaces the whole set: the names that go are said before
 * it is sent. Without it, the same source again: an image app's image pulled again (a tag that moved ships its new
 * image), a Git app's repository and branch rebuilt at their head. The API takes no "same source" of its own, and an
 * uploaded folder is not something the CLI can send back: that is refused with the way that works. Values are never
 * printed.
 */
export async function redeploy(api: Api, out: Output, target: Target, o: ControlOptions & { env: string[] }) {
  const envVars = o.env.length ? parseEnv(o.env) : undefined;
  const before = await readDeployment(api, target);
  if (envVars) out.info(envChange(before.envVarNames ?? [], Object.keys(envVars).sort()));
  const again =
    before.source.type === 'image' && before.source.image
      ? { image: before.source.image }
      : before.source.type === 'git'
        ? { git: {} }
        : undefined;
  if (!envVars && !again)
    throw new CliError(
      `${before.name} was built from an uploaded folder, which a redeploy cannot take again as it is`,
      'ship the folder again with slipway deploy in it (or --dir), or change the environment with redeploy --env',
    );
  await send(
    api,
    out,
    target,
    'redeploy',
    envVars ? { envVars } : again,
    o,
    {
      asked: 'redeploy',
      done: (p, d) => `${d.name} is running release r${p.outcome?.revision ?? '?'} at ${d.url ?? '(no URL)'}`,
    },
    before,
  );
}

const REVISION = /^r?(\d{1,9})$/;

/**
 * `rollback [ID|NAME] [REVISION]` (or --revision N): a lone argument that reads as a revision (3 or r3) is one, for
 * the folder's linked deployment; anything else names the deployment.
 */
export function rollbackArgs(
  first: string | undefined,
  second: string | undefined,
  flag: string | undefined,
): { given?: string; revision?: number } {
  let given: string | undefined;
  let raw: string | undefined;
  if (second !== undefined) [given, raw] = [first, second];
  else if (first !== undefined && REVISION.test(first) && !isDeploymentId(first)) raw = first;
  else given = first;
  if (flag !== undefined) {
    if (raw !== undefined) throw new CliError('give the revision once: as an argument or as --revision');
    raw = flag;
  }
  const out = given !== undefined ? { given } : {};
  if (raw === undefined) return out;
  const m = REVISION.exec(raw);
  if (!m || Number(m[1]) < 1) throw new CliError(`${raw} is not a revision`, 'slipway releases lists them (r1, r2, …)');
  return { ...out, revision: Number(m[1]) };
}

export async function rollback(api: Api, out: Output, target: Target, revision: number | undefined, o: ControlOptions) {
  await send(api, out, target, 'rollback', revision === undefined ? {} : { revision }, o, {
    asked: `rollback to ${revision ? `revision ${revision}` : 'the last healthy release'}`,
    done: (p, d) =>
      `${d.name} rolled back: release r${p.outcome?.revision ?? '?'} serves (${p.outcome?.status ?? '?'})`,
  });
}

/** The names an environment change answers with (PATCH …/env): never a value, the server returns none. */
interface EnvChanged {
  env: { envVarNames: string[]; set: string[]; unset: string[] };
}

const envNote = (a: CommandAccepted) => {
  const { env } = a as CommandAccepted & EnvChanged;
  return `the new release runs with ${env.envVarNames.length ? env.envVarNames.join(', ') : 'no variables'}`;
};

/**
 * `env set K=V …`: these variables added or changed, every other kept (the server merges them into the sealed
 * values, which no route gives out). A bare K takes its value from this shell, as --env does. Values are never
 * printed, with --json neither: the answer carries names only.
 */
export async function envSet(api: Api, out: Output, target: Target, pairs: string[], o: ControlOptions) {
  const set = parseEnv(pairs, '');
  const names = Object.keys(set).sort();
  await send(api, out, target, 'env', { set }, o, {
    asked: `setting ${names.join(', ')}`,
    note: envNote,
    done: (p, d) =>
      `${names.join(', ')} set: ${d.name} is running release r${p.outcome?.revision ?? '?'} with ${d.envVarNames?.join(', ') || 'no variables'}`,
  });
}

/** `env unset K …`: these variables removed, every other kept. */
export async function envUnset(api: Api, out: Output, target: Target, names: string[], o: ControlOptions) {
  for (const n of names)
    if (!ENV_NAME.test(n)) throw new CliError(`${n}: not a variable name`, 'names match [A-Za-z_][A-Za-z0-9_]*');
  const unset = [...new Set(names)].sort();
  await send(api, out, target, 'env', { unset }, o, {
    asked: `removing ${unset.join(', ')}`,
    note: envNote,
    done: (p, d) =>
      `${unset.join(', ')} removed: ${d.name} is running release r${p.outcome?.revision ?? '?'} with ${d.envVarNames?.join(', ') || 'no variables'}`,
  });
}
