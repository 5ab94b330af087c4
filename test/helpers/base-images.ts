import type Docker from 'dockerode';

import { baseImageTags, ensureBaseImages } from '@scripts/stack/base-images';

/**
 * The tags of Slipway's base images for this checkout's recipes (scripts/images), the same images `npm start`
 * builds and the configuration defaults name. Known before they exist; global setup builds them.
 */
export const BASE_IMAGES = (({ node, static: site, python }) => ({ node, static: site, python }))(baseImageTags());

/** Makes sure the bases exist (building what is missing, once per engine) and returns their tags. */
export async function buildBaseImages(
  docker: Docker,
  progress?: (line: string) => void,
): Promise<{ node: string; static: string; python: string }> {
  const { images } = await ensureBaseImages({ docker, ...(progress ? { progress } : {}) });
  return { node: images.node, static: images.static, python: images.python };
}
