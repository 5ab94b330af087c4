import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  currentUpdateInfo,
  isCancellation,
  log,
  patched,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';

import { SEARCH_ATTRIBUTES } from '@shared/constants';
import {
  ALLOWED_COMMANDS,
  type CommandName,
  type CommandOutcome,
  commandsQuery,
  type DeploymentWorkflowInput,
  destroyCommand,
  destroySignal,
  type EntityState,
  redeployCommand,
  rollbackCommand,
  scaleCommand,
  startCommand,
  stopCommand,
} from '@shared/contracts/deployment';
import type { DeploymentStatus } from '@shared/deployments/types';
import { ignore } from '@shared/ignore';

import { removeDeployment } from './activities';
import { cloudFirstDeploy, cloudRemove, cloudReplace, cloudScale, cloudStart, cloudStop } from './cloud';
import {
  COMMANDS_PER_RUN,
  nothingToRunIn,
  ONE_WRITER,
  type Pending,
  type Queued,
  redeployArgsProblem,
  replicasAfter,
  rollbackTargetOf,
  statusAfter,
  volumesAfter,
} from './command-rules';
import type { Entity } from './entity';
import { commandFailed, failureMessage, refuse, ReleaseFailed } from './failures';
import { firstDeploy } from './first-deploy';
import { scale, start, stop } from './lifecycle';
import { redeployNewSource } from './new-source';
import { PATCHES } from './patches';
import { ensureReleaseRecorded, replaceRelease } from './releases';
import { showDetails, showResumed, showStatus } from './visibility';
import { writes } from './writes';

/**
 * One deployment, from queued to destroyed (docs/architecture.md, "A deployment's lifecycle, as workflows"): the first
 * deploy, then commands — stop, start, redeploy, scale, rollback, destroy — sent as Updates, refused by their
 * validators when the status does not allow them, and carried out one at a time in the order accepted. A destroy
 * (signal or update) cancels whatever runs, so nothing a deploy or command started outlives the record.
 */
export async function deploymentWorkflow(input: DeploymentWorkflowInput): Promise<void> {
  upsertSearchAttributes([
    { key: SEARCH_ATTRIBUTES.deploymentId, value: input.deploymentId },
    { key: SEARCH_ATTRIBUTES.orgId, value: input.orgId },
  ]);
  const state: EntityState = input.resume ?? {
    status: 'queued',
    version: input.version,
    nextRevision: input.revision + 1,
    replicas: input.replicas ?? 1,
    releases: [],
  };
  // A cloud runs it (cloud.ts); absent in every history from before cloud providers, so those replay unchanged.
  const onCloud = input.provider !== undefined && input.provider !== 'engine_local';
  const e: Entity = {
    input,
    state,
    record: (status, message, extra = {}) => {
      state.status = status;
      showStatus(e, status, message, extra);
      return writes().recordStatus({
        deploymentId: input.deploymentId,
        version: ++state.version,
        status,
        message,
        ...extra,
      });
    },
  };

  let destroyRequested = false;
  let destroyed = false;
  let commandScope: CancellationScope | undefined;
  const requestDestroy = () => {
    destroyRequested = true;
    commandScope?.cancel();
  };
  setHandler(destroySignal, requestDestroy);

  const queue: Queued[] = [];
  let running: Queued | undefined;
  const projected = () => [running, ...queue].reduce((s, p) => (p ? statusAfter(p, s) : s), state.status);
  const outcome = (command: CommandName): CommandOutcome => ({
    command,
    status: state.status,
    revision: state.current?.revision ?? input.revision,
    replicas: state.replicas,
  });
  const enqueue = (p: Pending) =>
    new Promise<CommandOutcome>((done, fail) =>
      queue.push({ ...p, updateId: currentUpdateInfo()?.id ?? '', done, fail } as Queued),
    );
  /** Refuses a command the (projected) status does not allow, or that `reason` rules out. */
  const validate = (command: CommandName, reason?: (s: DeploymentStatus) => string | undefined) => {
    if (destroyRequested)
      throw refuse(command, state.status, 'The deployment is being destroyed; it takes no other command.');
    const s = projected();
    if (!ALLOWED_COMMANDS[s].includes(command)) throw refuse(command, s);
    const why = reason?.(s);
    if (why) throw refuse(command, s, why);
  };
  // The api started it with DeploymentStatus "queued"; the run's first status change updates it.
  if (input.resume) showResumed(e);
  else showDetails(e, 'queued', 'accepted; its deploy starts now');
  const destroying = () => showStatus(e, 'destroyed', 'destroyed; removing what it held from the engine');

  const kept = () => input.releasesKept ?? 10;
  const rollbackTarget = (revision?: number) => rollbackTargetOf(state, kept(), revision);
  const nothingToRun = () => nothingToRunIn(state);

  setHandler(stopCommand, () => enqueue({ command: 'stop' }), { validator: () => validate('stop') });
  setHandler(startCommand, () => enqueue({ command: 'start' }), { validator: () => validate('start') });
  const pending = () => [running, ...queue].filter((p): p is Queued => p !== undefined);
  setHandler(redeployCommand, (args) => enqueue({ command: 'redeploy', args }), {
    // New code needs nothing to have run before: a deployment whose first build failed can be given a fixed one.
    validator: (args) =>
      validate(
        'redeploy',
        () =>
          redeployArgsProblem(args) ??
          (args.source ? undefined : nothingToRun()) ??
          // The api checked the replicas before it attached; a scale accepted since must not meet the volume.
          (args.remount?.volumes && replicasAfter(pending(), state.replicas) > 1 ? ONE_WRITER : undefined),
      ),
  });
  setHandler(scaleCommand, (args) => enqueue({ command: 'scale', args }), {
    validator: (args) =>
      validate('scale', () =>
        !args || !Number.isInteger(args.replicas) || args.replicas < 0 || args.replicas > args.maxReplicas
          ? `replicas must be a whole number from 0 to ${args?.maxReplicas ?? 1} on this plan.`
          : (nothingToRun() ??
            (args.replicas > 1 && volumesAfter(pending(), state.current) > 0 ? ONE_WRITER : undefined)),
      ),
  });
  setHandler(rollbackCommand, (args) => enqueue({ command: 'rollback', args: args ?? {} }), {
    validator: (args) =>
      validate('rollback', () => {
        const target = rollbackTarget(args?.revision);
        return typeof target === 'string' ? target : undefined;
      }),
  });
  setHandler(destroyCommand, async () => {
    requestDestroy();
    await condition(() => destroyed);
    return outcome('destroy');
  });
  setHandler(commandsQuery, () => ({
    status: state.status,
    revision: state.current?.revision ?? input.revision,
    replicas: state.replicas,
    ...(running ? { running: { command: running.command, updateId: running.updateId } } : {}),
    queued: queue.map((q) => ({ command: q.command, updateId: q.updateId })),
  }));

  const removeAll = () =>
    CancellationScope.nonCancellable(async () => {
      // Off the router first, so the address answers "unknown" rather than a broken upstream; a router that
      // does not answer must not keep the containers alive (its route then fails over to nothing).
      if (state.routed)
        await writes()
          .routeTraffic({ deploymentId: input.deploymentId, route: { kind: 'remove' } })
          .catch((err: unknown) =>
            log.warn('the edge route of a destroyed deployment was not removed', { error: String(err) }),
          );
      if (onCloud) await cloudRemove(e);
      // On a cloud too: its attachments, databases, buckets and domains go with it, and any image built here.
      await removeDeployment(input.deploymentId);
    });

  if (!input.resume) {
    if (destroyRequested && patched(PATCHES.destroyedBeforeDeploy)) {
      destroying();
      await removeAll();
      return;
    }
    const withReleases = patched(PATCHES.releases);
    state.legacy = !withReleases;
    const deployScope = new CancellationScope();
    const deploying = deployScope.run(() => (onCloud ? cloudFirstDeploy(e) : firstDeploy(e, withReleases)));
    await Promise.race([
      deploying.catch(ignore('the race only waits; the deploy is awaited, and its failure thrown, just below')),
      condition(() => destroyRequested),
    ]);
    if (destroyRequested) deployScope.cancel();
    await deploying.catch((err: unknown) => {
      if (!isCancellation(err)) throw err;
    });
  }

  /** Carries out one accepted command; the status is checked again, as the projection was optimistic. */
  async function execute(p: Queued): Promise<CommandOutcome> {
    if (!ALLOWED_COMMANDS[state.status].includes(p.command)) throw refuse(p.command, state.status);
    if (onCloud) {
      await executeOnCloud(p);
      return outcome(p.command);
    }
    await ensureReleaseRecorded(e);
    if (p.command === 'stop') await stop(e);
    else if (p.command === 'start') await start(e);
    else if (p.command === 'scale') await scale(e, p.args.replicas);
    else if (p.command === 'redeploy' && p.args.source) await redeployNewSource(e, p.args.source, p.args.envRef);
    else if (p.command === 'redeploy' && p.args.remount) {
      // The serving code and env again; the release copies the deployment's attachments as they are now.
      const base = state.current!;
      const env = { from: 'release' as const, revision: base.revision };
      await replaceRelease(e, { image: base.image, imageId: base.imageId, env, trigger: 'redeploy' });
    } else if (p.command === 'redeploy') {
      const base = state.current!;
      const env = { from: 'set' as const, envRef: p.args.envRef! };
      await replaceRelease(e, { image: base.image, imageId: base.imageId, env, trigger: 'redeploy' });
    } else if (p.command === 'rollback') {
      const target = rollbackTarget(p.args.revision);
      if (typeof target === 'string') throw refuse('rollback', state.status, target);
      await replaceRelease(e, {
        image: target.image,
        imageId: target.imageId,
        env: { from: 'release', revision: target.revision },
        trigger: 'rollback',
        rollbackOf: target.revision,
      });
    }
    return outcome(p.command);
  }

  /** The same commands on a cloud (cloud.ts): the cloud keeps the revisions, so a rollback needs no image here. */
  async function executeOnCloud(p: Queued): Promise<void> {
    const base = state.current;
    if (p.command === 'stop') await cloudStop(e);
    else if (p.command === 'start') await cloudStart(e);
    else if (p.command === 'scale') await cloudScale(e, p.args.replicas);
    else if (p.command === 'redeploy')
      await cloudReplace(e, {
        image: base?.image ?? '',
        env: p.args.envRef ? { from: 'set', envRef: p.args.envRef } : { from: 'record' },
        trigger: 'redeploy',
        ...(p.args.source ? { source: p.args.source } : {}),
      });
    else if (p.command === 'rollback') {
      const target = rollbackTarget(p.args.revision);
      if (typeof target === 'string') throw refuse('rollback', state.status, target);
      await cloudReplace(e, {
        image: target.image,
        env: { from: 'release', revision: target.revision },
        trigger: 'rollback',
        rollbackOf: target,
      });
    }
  }

  /** What the command's caller reads when it did not succeed: our words, never engine or driver text. */
  const asFailure = (err: unknown, p: Queued): ApplicationFailure => {
    if (destroyRequested && isCancellation(err))
      return commandFailed('The deployment was destroyed while this command ran.');
    if (err instanceof ReleaseFailed) return commandFailed(err.report.message, err.report);
    if (err instanceof ApplicationFailure) return err;
    if (err instanceof ActivityFailure) {
      // Engine or driver text that outlived its retries stays in the worker's log (failureMessage logs it).
      failureMessage(err, 'start');
      return commandFailed(
        `The ${p.command} failed because of an internal error; try it again, and if it fails again contact the operator.`,
      );
    }
    throw err;
  };

  let executed = 0;
  const shouldContinue = () =>
    workflowInfo().continueAsNewSuggested || executed >= (input.commandsPerRun ?? COMMANDS_PER_RUN);
  for (;;) {
    await condition(() => destroyRequested || queue.length > 0 || (shouldContinue() && allHandlersFinished()));
    if (destroyRequested) break;
    if (queue.length === 0) {
      // Values in the clear (from workflows older than sealing) are not carried on: the record holds them.
      const { envVars: _clear, ...rest } = input;
      await continueAsNew<typeof deploymentWorkflow>({ ...rest, resume: state });
    }
    const p = queue.shift()!;
    running = p;
    commandScope = new CancellationScope();
    try {
      p.done(await commandScope.run(() => execute(p)));
    } catch (err) {
      p.fail(asFailure(err, p));
    } finally {
      running = undefined;
      commandScope = undefined;
      executed++;
    }
  }

  for (const p of queue.splice(0)) p.fail(commandFailed('The deployment was destroyed before this command ran.'));
  // The record is already hidden; remove whatever the deployment holds on the engine.
  destroying();
  await removeAll();
  destroyed = true;
  await condition(allHandlersFinished);
}
