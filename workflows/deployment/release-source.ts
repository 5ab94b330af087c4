import type { BuildResult } from '@activities/deployment/build';
import type { ReleaseSource } from '@shared/deployments/releases-store';
import type { DeploymentSource } from '@shared/deployments/types';

/**
 * What a release records of the code it runs: the image reference and the image it resolved to, or what its build
 * read (the upload's digest and size, the commit it checked out). A build that did not say (a worker from before it
 * did) leaves the release without one.
 */
export function releaseSource(
  source: DeploymentSource,
  imageId: string,
  built?: BuildResult,
): ReleaseSource | undefined {
  if (source.type === 'image') return { type: 'image', image: source.image, imageId };
  if (source.type === 'upload') return built?.upload && { type: 'upload', uploadId: source.uploadId, ...built.upload };
  if (!built?.commit) return undefined;
  return {
    type: 'git',
    repoUrl: source.repoUrl,
    ...(source.branch ? { branch: source.branch } : {}),
    commit: built.commit,
  };
}
