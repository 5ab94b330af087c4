import type { DeploymentRecord, DeploymentSource } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import type { DeploymentCommands } from './commands';
import type { DeploymentServiceDeps } from './service.deps';
import type { DeploymentReads } from './service.reads';
import type { SourceChecks, SourceInput } from './service.sources';

/** A redeploy's body as the route parsed it: a new env, a new source, or both. */
export interface RedeployChange {
  envVars?: Record<string, string>;
  image?: string;
  uploadId?: string;
  /** Every field optional: what is left out comes from the deployment's own repository, or its project's. */
  git?: Pick<SourceInput, 'repoUrl' | 'branch' | 'gitTokenSecretId' | 'vaultEnvironment'> & { commit?: string };
  dockerfilePath?: string;
}

/** The build options a deployment's source carries, which new code built for it keeps unless told otherwise. */
const buildOptionsOf = (source: DeploymentSource): { dockerfilePath?: string } =>
  source.type !== 'image' && source.dockerfilePath ? { dockerfilePath: source.dockerfilePath } : {};

/** New code or a new environment for an existing deployment, its source checked before the command is sent. */
export function createRedeploy(
  deps: Pick<DeploymentServiceDeps, 'projects'>,
  parts: { reads: Pick<DeploymentReads, 'get'>; sources: SourceChecks; commands: Pick<DeploymentCommands, 'redeploy'> },
) {
  const { reads, sources, commands } = parts;

  /**
   * The repository a redeploy's `git` builds: what it names, and for what it leaves out, the deployment's own
   * repository (when it was deployed from Git) or else its project's. Another repository brings only the token it
   * names itself: a default's token is never sent to a host the caller chose.
   */
  async function gitOf(
    principal: Principal,
    record: DeploymentRecord,
    named: NonNullable<RedeployChange['git']>,
  ): Promise<SourceInput> {
    if (named.repoUrl !== undefined) return named;
    let base: SourceInput | undefined;
    if (record.source.type === 'git') base = record.source;
    else if (record.projectId) {
      const project = await deps.projects.get(principal.org._id, record.projectId);
      if (project?.repoUrl)
        base = {
          repoUrl: project.repoUrl,
          ...(project.gitBranch ? { branch: project.gitBranch } : {}),
          ...(project.gitTokenSecretId ? { gitTokenSecretId: project.gitTokenSecretId } : {}),
          ...(project.vaultEnvironment ? { vaultEnvironment: project.vaultEnvironment } : {}),
        };
    }
    if (!base)
      throw new AppError(
        'INVALID_REQUEST',
        `git.repoUrl is needed: deployment ${record._id} was not deployed from a Git repository and ${record.projectId ? 'its project names none' : 'is in no project'}.`,
        { deploymentId: record._id },
      );
    const { repoUrl, branch, gitTokenSecretId, vaultEnvironment } = base;
    return {
      repoUrl,
      ...(branch ? { branch } : {}),
      ...(gitTokenSecretId ? { gitTokenSecretId } : {}),
      ...(vaultEnvironment ? { vaultEnvironment } : {}),
      ...named,
    };
  }

  return {
    /**
     * A new environment, new code, or both, as the next release of the same deployment (same ID, same URL): the new
     * source is held to a first deploy's rules before the workflow hears of it, and an upload of another organisation
     * is not found. It creates no deployment, so it spends no creation budget nor quota slot.
     */
    async redeploy(principal: Principal, id: string, change: RedeployChange) {
      const record = await reads.get(principal, id);
      const dockerfilePath = change.dockerfilePath ?? buildOptionsOf(record.source).dockerfilePath;
      const built = dockerfilePath ? { dockerfilePath } : {};
      let source: DeploymentSource | undefined;
      if (change.image !== undefined) source = await sources.imageSource(change.image);
      else if (change.uploadId !== undefined)
        source = await sources.builtSource(principal, { uploadId: change.uploadId, ...built }, 'UPLOAD_NOT_FOUND');
      else if (change.git !== undefined) {
        const { commit, ...named } = change.git;
        const repository = { ...(await gitOf(principal, record, named)), ...built };
        // A commit is fetched by its SHA alone: a branch only the defaults named says nothing about it.
        if (commit && named.branch === undefined) delete repository.branch;
        const checked = await sources.builtSource(principal, repository, 'UPLOAD_NOT_FOUND');
        source = commit && checked.type === 'git' ? { ...checked, commit } : checked;
      }
      return commands.redeploy(principal, id, {
        ...(change.envVars ? { envVars: change.envVars } : {}),
        ...(source ? { source } : {}),
      });
    },
  };
}
