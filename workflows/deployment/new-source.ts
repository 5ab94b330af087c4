import { CancellationScope, isCancellation } from '@temporalio/workflow';

import type { BuildResult } from '@activities/deployment/build';
import type { EnvSource } from '@activities/deployment/releases';
import type { DeploymentSource } from '@shared/deployments/types';

import { builder, prepareImage } from './activities';
import type { Entity } from './entity';
import { failureReport, type Phase, ReleaseFailed } from './failures';
import { releaseSource } from './release-source';
import { replaceRelease } from './releases';

/** What the event log says a source build starts from. */
function buildWords(source: Exclude<DeploymentSource, { type: 'image' }>): string {
  if (source.type === 'upload') return `extracting upload ${source.uploadId} and building`;
  const at = source.commit ? ` at commit ${source.commit}` : source.branch ? ` (branch ${source.branch})` : '';
  return `cloning ${source.repoUrl}${at} and building`;
}

/**
 * A redeploy that brings new code: the next release is built (same build as a first deploy's, tagged with the
 * release's revision, its lines streamed to the deployment's log) or its image prepared, while the serving release
 * goes on serving; replaceRelease then starts it beside and switches the traffic once it answers. A build or pull
 * that fails changes nothing but lastFailure: the status is what it was, and the command fails with the report.
 */
export async function redeployNewSource(e: Entity, source: DeploymentSource, envRef?: string): Promise<void> {
  const { input, state } = e;
  const revision = state.nextRevision++;
  const statusBefore = state.status;
  // Serving traffic while the new code builds: a running deployment stays running throughout.
  const serving = statusBefore === 'running';
  let phase: Phase = source.type === 'image' ? 'pull' : 'build';
  let image: string;
  let imageId: string;
  let built: BuildResult | undefined;
  try {
    if (source.type === 'image') {
      await e.record(serving ? 'running' : 'deploying', `release ${revision}: preparing image ${source.image}`);
      image = source.image;
    } else {
      await e.record(serving ? 'running' : 'building', `release ${revision}: ${buildWords(source)}`);
      built = await builder(input.buildTimeoutS ?? 900).buildSource({
        deploymentId: input.deploymentId,
        orgId: input.orgId,
        revision,
        port: input.port,
        source,
        limits: input.limits,
      });
      phase = 'pull';
      image = built.image;
    }
    ({ imageId } = await prepareImage(image, input.orgId));
  } catch (err) {
    if (isCancellation(err)) throw err;
    const report = failureReport(err, phase, 'redeploy', revision);
    await CancellationScope.nonCancellable(() =>
      e.record(statusBefore, `release ${revision} failed: ${report.message}`, { lastFailure: report }),
    );
    throw new ReleaseFailed(report);
  }
  // Without new values the release runs with the serving env, which the record holds.
  const env: EnvSource = envRef ? { from: 'set', envRef } : { from: 'record' };
  await replaceRelease(e, {
    image,
    imageId,
    env,
    trigger: 'redeploy',
    revision,
    source: releaseSource(source, imageId, built) ?? null,
    statusBefore,
  });
}
