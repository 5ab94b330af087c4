import type Docker from 'dockerode';

import { baseImageTags, ensureBaseImages, ensureServiceImages, serviceImageTags } from '@scripts/stack/base-images';
import { createDockerClient } from '@shared/engine/docker-client';

/**
 * The tags of Slipway's base images for this checkout's recipes (scripts/images), the same images `npm start`
 * builds and the configuration defaults name. Known before they exist; global setup builds them.
 */
export const BASE_IMAGES = (({ node, static: site, python }) => ({ node, static: site, python }))(baseImageTags());

/** The database engines' images for this checkout's recipes, by the configuration's engine names. */
export const DATABASE_IMAGES = (({ postgres, mariadb, redis }) => ({ postgresql: postgres, mariadb, redis }))(
  serviceImageTags(),
);

/** Makes sure the bases exist (building what is missing, once per engine) and returns their tags. */
export async function buildBaseImages(
  docker: Docker,
  progress?: (line: string) => void,
): Promise<{ node: string; static: string; python: string }> {
  const { images } = await ensureBaseImages({ docker, ...(progress ? { progress } : {}) });
  return { node: images.node, static: images.static, python: images.python };
}

/** Makes sure the database engines' images exist (building what is missing) and returns their tags. */
export async function buildDatabaseImages(
  docker: Docker,
  progress?: (line: string) => void,
): Promise<{ postgresql: string; mariadb: string; redis: string }> {
  const { images } = await ensureServiceImages({ docker, ...(progress ? { progress } : {}) });
  return { postgresql: images.postgres, mariadb: images.mariadb, redis: images.redis };
}

/** The configuration that points source builds at the base images (built first when missing). */
export async function baseImageEnv(): Promise<Record<string, string>> {
  const base = await buildBaseImages(createDockerClient(process.env.DOCKER_HOST));
  return {
    BUILD_BASE_IMAGE_NODE: base.node,
    BUILD_BASE_IMAGE_STATIC: base.static,
    BUILD_BASE_IMAGE_PYTHON: base.python,
  };
}
