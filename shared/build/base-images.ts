/**
 * Slipway's own base images (scripts/stack/base-images/ builds them): usable by every organisation, so they
 * carry this label and no organisation label. A user's Dockerfile may say `FROM slipway/node` and so on.
 */
export const BASE_IMAGE_NAMES = ['node', 'python', 'static'] as const;
export type BaseImageName = (typeof BASE_IMAGE_NAMES)[number];

/** Label whose value names the base (`debian`, `node`, `python`, `static`). */
export const BASE_IMAGE_LABEL = 'dev.slipway.base-image';

/** The configuration's defaults: `latest` of each local base, which the build of the bases keeps current. */
export const DEFAULT_BASE_IMAGES: Record<BaseImageName, string> = {
  node: 'slipway/node',
  python: 'slipway/python',
  static: 'slipway/static',
};

/**
 * The unprivileged user (uid and gid) apps built from source run as: every base has it (scripts/images: node in
 * slipway/node, as in the official node image; app in the others). Used by number, so a configured base image that
 * lacks the name still runs the app unprivileged.
 */
export const APP_UID = 1000;
export const APP_USER = `${APP_UID}:${APP_UID}`;
