import type { DeploymentSource } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { imageDeployRefusal } from '@shared/images/registry-guard';
import type { SecretEnvironment } from '@shared/secrets/store';

import type { DeploymentServiceDeps } from './service.deps';

/** A source deploy's fields: exactly one of uploadId and repoUrl (the route's schema holds that). */
export interface SourceInput {
  uploadId?: string;
  repoUrl?: string;
  branch?: string;
  gitTokenSecretId?: string;
  vaultEnvironment?: SecretEnvironment;
  dockerfilePath?: string;
}

/** The checks a source is held to before any workflow hears of it, the same for a first deploy and a redeploy. */
export function createSourceChecks(deps: Pick<DeploymentServiceDeps, 'uploads' | 'git' | 'config' | 'orgSettings'>) {
  const { git } = deps;

  /** An image to run, refused here when its registry may not be used (the engine checks ownership when it pulls). */
  async function imageSource(image: string): Promise<DeploymentSource> {
    const refused = await imageDeployRefusal(image, { allowPrivateRegistries: deps.config.ALLOW_PRIVATE_REGISTRIES });
    if (refused) throw new AppError('INVALID_REQUEST', refused, { image });
    return { type: 'image', image };
  }

  /**
   * A source to build, checked: the upload is the organisation's and unexpired, or the repository and its token pass
   * the Git rules. `unknownUpload` is the code an upload the caller cannot have gets: a first deploy has always called
   * it an invalid request; a redeploy, which names an existing resource, says not found.
   */
  async function builtSource(
    principal: Principal,
    input: SourceInput,
    unknownUpload: 'INVALID_REQUEST' | 'UPLOAD_NOT_FOUND',
  ): Promise<DeploymentSource> {
    if (input.uploadId) {
      if (!(await deps.uploads.get(principal.org._id, input.uploadId))) {
        throw new AppError(
          unknownUpload,
          `uploadId ${input.uploadId} is unknown, expired or not this organisation's; upload the zip with POST /uploads/zip first.`,
          { uploadId: input.uploadId },
        );
      }
      return {
        type: 'upload',
        uploadId: input.uploadId,
        ...(input.dockerfilePath ? { dockerfilePath: input.dockerfilePath } : {}),
      };
    }
    // The organisation's default vault when the deploy names none (GET /platform/organization).
    const vaultEnvironment =
      input.vaultEnvironment ?? (await deps.orgSettings.of(principal.org._id)).defaultVaultEnvironment;
    const secret = input.gitTokenSecretId
      ? await git.secret(principal, input.gitTokenSecretId, input.repoUrl!, vaultEnvironment)
      : undefined;
    await git.repoUrl(input.repoUrl!);
    return {
      type: 'git',
      repoUrl: input.repoUrl!,
      ...(input.branch ? { branch: input.branch } : {}),
      ...(secret ? { gitTokenSecretId: secret, vaultEnvironment } : {}),
      ...(input.dockerfilePath ? { dockerfilePath: input.dockerfilePath } : {}),
    };
  }

  return { imageSource, builtSource };
}

export type SourceChecks = ReturnType<typeof createSourceChecks>;
