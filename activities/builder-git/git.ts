import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ApplicationFailure, heartbeat } from '@temporalio/activity';

import { cloneCheckout, cloneRepository, explainPushFailure } from '@shared/build/git';
import { hardenedGit } from '@shared/build/git-hardening';
import { type BlobStore, pathProblem } from '@shared/builder/files';
import type { GitBindingStore } from '@shared/builder/git-store';
import type { BuilderStore } from '@shared/builder/store';
import { BUILDER_LIMITS, type CheckpointRecord } from '@shared/builder/types';
import type { Config } from '@shared/config';
import {
  GIT_NON_FAST_FORWARD,
  GIT_REFUSED,
  type GitImportInput,
  type GitImportResult,
  type PushInput,
  type PushResult,
} from '@shared/contracts/builder-git';
import { OutboundTargetError, resolveTarget } from '@shared/net-guard';
import { GitSecretRefusedError, type Vault } from '@shared/secrets/vault';

export interface GitActivityDeps {
  store: Pick<BuilderStore, 'getCheckpoint'>;
  blobs: Pick<BlobStore, 'get' | 'put'>;
  bindings: GitBindingStore;
  vault: Pick<Vault, 'revealForGit'>;
  config: Pick<Config, 'ALLOW_PRIVATE_GIT_HOSTS' | 'GIT_CLONE_TIMEOUT_S' | 'GIT_MAX_BYTES' | 'BUILD_WORK_DIR'>;
}

const refused = (message: string) => ApplicationFailure.create({ type: GIT_REFUSED, nonRetryable: true, message });

/**
 * Git for builder sessions: push a checkpoint's files as a commit, import a repository as a session's
 * first files. Run by the worker only, with the source deploys' rules: the host checked against private networks
 * and pinned (DNS rebinding), no redirects, no local transports, the token in git's environment and never printed.
 */
export function createGitActivities(deps: GitActivityDeps) {
  const { config } = deps;

  async function token(orgId: string, id: string | undefined, url: string): Promise<string | undefined> {
    if (!id) return undefined;
    const value = await deps.vault
      .revealForGit(orgId, id, { url, environment: 'PRODUCTION', allowHttp: config.ALLOW_PRIVATE_GIT_HOSTS })
      .catch((err: unknown) => {
        throw err instanceof GitSecretRefusedError ? refused(`tokenSecretId is refused: ${err.message}`) : err;
      });
    if (value === undefined) throw refused(`the secret ${id} (tokenSecretId) no longer exists`);
    return value;
  }

  /** git with the pinned address and the token; resolves with its exit code and scrubbed output. */
  async function gitRunner(url: string, secret: string | undefined, cwd: string) {
    let target;
    try {
      target = await resolveTarget(new URL(url), { allowPrivate: config.ALLOW_PRIVATE_GIT_HOSTS });
    } catch (err) {
      if (!(err instanceof OutboundTargetError)) throw err;
      throw refused(`refusing ${url}: ${err.reason}${err.openable ? ' (ALLOW_PRIVATE_GIT_HOSTS is off)' : ''}`);
    }
    const { args: pin, env, scrub } = hardenedGit({ target, home: cwd, token: secret });
    return (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
      new Promise<{ code: number; out: string }>((resolve, reject) => {
        const child = spawn('git', [...pin, ...args], {
          cwd,
          env: { ...env, ...extraEnv },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        const add = (d: Buffer) => {
          out = (out + d.toString('utf8')).slice(-16384);
        };
        child.stdout.on('data', add);
        child.stderr.on('data', add);
        const timer = setTimeout(() => child.kill('SIGKILL'), config.GIT_CLONE_TIMEOUT_S * 1000);
        child.once('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        child.once('close', (code) => {
          clearTimeout(timer);
          resolve({ code: code ?? -1, out: scrub(out) });
        });
      });
  }

  const scratch = () => fs.mkdtemp(path.join(config.BUILD_WORK_DIR ?? os.tmpdir(), 'slipway-builder-git-'));

  return {
    /**
     * Commits the checkpoint's files on top of the remote branch and pushes. Refused unless the branch is where this
     * session left it (or does not exist yet), or `force`: the commit then replaces the files on top of what is there.
     */
    async builderGitPush(input: PushInput): Promise<PushResult> {
      const checkpoint = await deps.store.getCheckpoint(input.orgId, input.sessionId, input.checkpointId);
      if (!checkpoint) throw refused(`the checkpoint ${input.checkpointId} does not exist`);
      // Checked again here, where the files become a working tree git runs in: a path saved under older rules (a
      // nested .git, say) must never reach it.
      for (const f of checkpoint.files) {
        const problem = pathProblem(f.path);
        if (problem) throw refused(`the session's file ${JSON.stringify(f.path)} ${problem}; delete or rename it`);
      }
      const secret = await token(input.orgId, input.tokenSecretId, input.remoteUrl);
      const dir = await scratch();
      try {
        const git = await gitRunner(input.remoteUrl, secret, dir);
        const must = async (args: string[], env?: NodeJS.ProcessEnv) => {
          const r = await git(args, env);
          if (r.code !== 0) throw refused(explainPushFailure(input.remoteUrl, r.out));
          return r.out.trim();
        };
        await must(['init', '-q', '-b', input.branch]);
        for (const f of checkpoint.files) {
          const file = path.join(dir, f.path);
          await fs.mkdir(path.dirname(file), { recursive: true });
          await fs.writeFile(file, await deps.blobs.get(input.orgId, f.sha256));
        }
        heartbeat();
        const fetched = await git(['fetch', '-q', '--depth=1', '--', input.remoteUrl, `refs/heads/${input.branch}`]);
        let tip: string | undefined;
        if (fetched.code === 0) tip = await must(['rev-parse', 'FETCH_HEAD']);
        else if (!/couldn't find remote ref|not our ref/i.test(fetched.out))
          throw refused(explainPushFailure(input.remoteUrl, fetched.out));
        const binding = await deps.bindings.get(input.orgId, input.sessionId);
        const ours =
          binding && binding.remoteUrl === input.remoteUrl && binding.branch === input.branch
            ? binding.lastCommit
            : undefined;
        if (tip && tip !== ours && !input.force)
          throw ApplicationFailure.create({
            type: GIT_NON_FAST_FORWARD,
            nonRetryable: true,
            message: `the branch ${input.branch} of ${input.remoteUrl} has commits this session did not make (${tip.slice(0, 12)}); import it again to work on them, or push with force: true to put the session's files on top`,
          });
        await must(['add', '-A']);
        const tree = await must(['write-tree']);
        if (tip && (await must(['rev-parse', `${tip}^{tree}`])) === tree) return record(input, tip, false);
        const who = { GIT_AUTHOR_NAME: input.author.name, GIT_AUTHOR_EMAIL: input.author.email };
        const commit = await must(['commit-tree', tree, ...(tip ? ['-p', tip] : []), '-m', input.message], {
          ...who,
          GIT_COMMITTER_NAME: 'Slipway',
          GIT_COMMITTER_EMAIL: 'builder@slipway.invalid',
        });
        const pushed = await git(['push', '-q', '--', input.remoteUrl, `${commit}:refs/heads/${input.branch}`]);
        if (pushed.code !== 0) {
          // The branch moved between our fetch and our push.
          if (/non-fast-forward|fetch first|rejected/i.test(pushed.out))
            throw ApplicationFailure.create({
              type: GIT_NON_FAST_FORWARD,
              nonRetryable: true,
              message: `the branch ${input.branch} of ${input.remoteUrl} moved while pushing; push again`,
            });
          throw refused(explainPushFailure(input.remoteUrl, pushed.out));
        }
        return record(input, commit, true);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },

    /** A shallow clone's files, stored as blobs: the manifest of an imported session's first checkpoint. */
    async builderGitImport(input: GitImportInput): Promise<GitImportResult> {
      const secret = await token(input.orgId, input.tokenSecretId, input.repoUrl);
      const dir = await scratch();
      try {
        const { commit } = await cloneRepository({
          url: input.repoUrl,
          ...(input.branch ? { branch: input.branch } : {}),
          ...(secret ? { token: secret } : {}),
          dest: dir,
          maxBytes: config.GIT_MAX_BYTES,
          allowPrivateHosts: config.ALLOW_PRIVATE_GIT_HOSTS,
          signal: AbortSignal.timeout(config.GIT_CLONE_TIMEOUT_S * 1000),
          log: () => undefined,
        }).catch((err: unknown) => {
          if (err instanceof Error && err.name === 'GitError') throw refused(err.message);
          if (err instanceof Error && err.name === 'TimeoutError')
            throw refused(`git clone took longer than ${config.GIT_CLONE_TIMEOUT_S} s and was stopped`);
          throw err;
        });
        const root = cloneCheckout(dir);
        const entries = await fs.readdir(root, { withFileTypes: true, recursive: true });
        // Regular files only: a symlink is not a file of the app (and may point out of the tree).
        const paths = entries
          .filter((e) => e.isFile())
          .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
          .sort();
        if (paths.length > BUILDER_LIMITS.maxFiles)
          throw refused(`the repository has ${paths.length} files; a session holds at most ${BUILDER_LIMITS.maxFiles}`);
        const files: CheckpointRecord['files'] = [];
        let total = 0;
        for (const p of paths) {
          const problem = pathProblem(p);
          if (problem) throw refused(`the repository's file ${JSON.stringify(p)} ${problem}`);
          const bytes = await fs.readFile(path.join(root, p));
          if (bytes.length > BUILDER_LIMITS.maxFileBytes)
            throw refused(
              `the repository's file ${p} has ${bytes.length} bytes; a session file holds at most ${BUILDER_LIMITS.maxFileBytes}`,
            );
          total += bytes.length;
          if (total > BUILDER_LIMITS.maxSessionBytes)
            throw refused(`the repository's files pass the session cap of ${BUILDER_LIMITS.maxSessionBytes} bytes`);
          files.push({ path: p, ...(await deps.blobs.put(input.orgId, bytes)) });
          heartbeat();
        }
        return { files, commit, branch: input.branch ?? null };
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };

  async function record(input: PushInput, commit: string, pushed: boolean) {
    await deps.bindings.put({
      _id: input.sessionId,
      orgId: input.orgId,
      remoteUrl: input.remoteUrl,
      branch: input.branch,
      lastCommit: commit,
      checkpointId: input.checkpointId,
      at: new Date(),
      ...(input.tokenSecretId ? { tokenSecretId: input.tokenSecretId } : {}),
      via: 'push',
    });
    return { commit, pushed };
  }
}
