import { randomUUID } from 'node:crypto';

import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

import type { GitSourceCheck } from '@shared/build/git-source';
import type { GitBindingStore } from '@shared/builder/git-store';
import type { BuilderStore } from '@shared/builder/store';
import type { Config } from '@shared/config';
import {
  BUILDER_GIT_IMPORT_WORKFLOW,
  BUILDER_GIT_PUSH_WORKFLOW,
  builderGitImportWorkflowId,
  builderGitPushWorkflowId,
  GIT_NON_FAST_FORWARD,
  GIT_REFUSED,
  type GitImportResult,
  type PushInput,
} from '@shared/contracts/builder-git';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import type { BuilderService } from './service';

/** A Git failure the worker explained, as the caller's error: refused (400) or a remote that moved on (409). */
function rethrow(err: unknown): never {
  const cause = err instanceof WorkflowFailedError ? (err.cause?.cause ?? err.cause) : undefined;
  if (cause instanceof ApplicationFailure && cause.type === GIT_NON_FAST_FORWARD)
    throw new AppError('CONFLICT', `The push was refused: ${cause.message}.`, {});
  if (cause instanceof ApplicationFailure && cause.type === GIT_REFUSED)
    throw new AppError('INVALID_REQUEST', `${cause.message[0]!.toUpperCase()}${cause.message.slice(1)}.`, {});
  throw err;
}

/** Git push and import of builder sessions; the Git itself runs in the worker (workflows/builder-git). */
export function createBuilderGitService(deps: {
  builder: Pick<BuilderService, 'load' | 'project' | 'create'>;
  store: Pick<BuilderStore, 'appendCheckpoint'>;
  bindings: GitBindingStore;
  temporal: Client;
  git: GitSourceCheck;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>;
}) {
  const { builder, temporal, bindings, store } = deps;

  async function checkSource(p: Principal, url: string, tokenSecretId: string | undefined) {
    await deps.git.repoUrl(url);
    if (tokenSecretId) await deps.git.secret(p, tokenSecretId, url, 'PRODUCTION');
  }

  return {
    async status(p: Principal, id: string) {
      const s = await builder.load(p, id, 'read');
      const b = await bindings.get(s.orgId, s._id);
      return {
        remoteUrl: b?.remoteUrl ?? null,
        branch: b?.branch ?? null,
        lastCommit: b?.lastCommit ?? null,
        lastCommitCheckpointId: b?.checkpointId ?? null,
        via: b?.via ?? null,
        at: b?.at.toISOString() ?? null,
        headCheckpointId: s.head?._id ?? null,
        headDiffers: s.head ? s.head._id !== b?.checkpointId : false,
      };
    },

    async push(
      p: Principal,
      id: string,
      body: { remoteUrl?: string; branch: string; message: string; tokenSecretId?: string; force?: boolean },
    ) {
      const s = await builder.load(p, id, 'write');
      if (!s.head) throw new AppError('INVALID_REQUEST', 'The session has no files to push yet; save some first.', {});
      const bound = await bindings.get(s.orgId, s._id);
      const remoteUrl = body.remoteUrl ?? bound?.remoteUrl;
      if (!remoteUrl)
        throw new AppError('INVALID_REQUEST', 'This session is bound to no remote yet; name remoteUrl.', {});
      const tokenSecretId = body.tokenSecretId ?? (remoteUrl === bound?.remoteUrl ? bound.tokenSecretId : undefined);
      await checkSource(p, remoteUrl, tokenSecretId);
      const input: PushInput = {
        orgId: s.orgId,
        sessionId: s._id,
        checkpointId: s.head._id,
        remoteUrl,
        branch: body.branch,
        message: body.message,
        ...(tokenSecretId ? { tokenSecretId } : {}),
        force: body.force ?? false,
        author: { name: p.user.name ?? p.user.email, email: p.user.email },
      };
      try {
        const r = await temporal.workflow.execute(BUILDER_GIT_PUSH_WORKFLOW, {
          workflowId: builderGitPushWorkflowId(s._id),
          taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
          args: [input],
        });
        return {
          ...(r as { commit: string; pushed: boolean }),
          checkpointId: s.head._id,
          remoteUrl,
          branch: body.branch,
        };
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          throw new AppError('CONFLICT', 'A push of this session is running; wait for it, then push again.', {});
        rethrow(err);
      }
    },

    /** A new session in the project whose first checkpoint holds the repository's files. */
    async importRepo(
      p: Principal,
      body: { repoUrl: string; branch?: string; projectId: string; tokenSecretId?: string; title?: string },
    ): Promise<string> {
      // The caller's role in the project before anything else: someone who may not make a session there learns
      // nothing from this route (not whether the project exists) and cannot make the worker resolve or clone a URL.
      await builder.project(p, body.projectId, 'write');
      await checkSource(p, body.repoUrl, body.tokenSecretId);
      let result: GitImportResult;
      try {
        result = await temporal.workflow.execute(BUILDER_GIT_IMPORT_WORKFLOW, {
          workflowId: builderGitImportWorkflowId(randomUUID()),
          taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
          args: [
            {
              orgId: p.org._id,
              repoUrl: body.repoUrl,
              ...(body.branch ? { branch: body.branch } : {}),
              ...(body.tokenSecretId ? { tokenSecretId: body.tokenSecretId } : {}),
            },
          ],
        });
      } catch (err) {
        rethrow(err);
      }
      if (result.files.length === 0)
        throw new AppError('INVALID_REQUEST', 'The repository has no files to import.', {});
      const title =
        body.title ??
        body.repoUrl
          .replace(/\.git$/, '')
          .split('/')
          .pop() ??
        'Imported app';
      const id = await builder.create(p, { projectId: body.projectId, title: title.slice(0, 120) });
      const checkpoint = await store.appendCheckpoint(undefined, {
        sessionId: id,
        orgId: p.org._id,
        files: result.files,
        createdBy: p.user._id,
        reason: 'import',
      });
      await bindings.put({
        _id: id,
        orgId: p.org._id,
        remoteUrl: body.repoUrl,
        branch: result.branch,
        lastCommit: result.commit,
        checkpointId: checkpoint!._id,
        at: new Date(),
        ...(body.tokenSecretId ? { tokenSecretId: body.tokenSecretId } : {}),
        via: 'import',
      });
      return id;
    },
  };
}

export type BuilderGitService = ReturnType<typeof createBuilderGitService>;
