import type Docker from 'dockerode';

import { LABELS } from '../constants';
import {
  formatImageReference,
  type ImageReference,
  parseImageReference,
  repositoryOf,
  tryParseImageReference,
} from './reference';

/**
 * Images built by Slipway are tagged in this repository (`slipway/<deploymentId>:<revision>`) and exist only on
 * this engine: a name there that is not usable here is never pulled, since the registry's copy would be a
 * stranger's image under our name (and a pull would move the tag off the owner's image).
 */
export const BUILT_IMAGES_REPOSITORY = 'docker.io/slipway/';

export type ImageResolution =
  /** On the engine, named by exactly this reference, and the caller's organisation may use it. */
  | { kind: 'usable'; reference: string; id: string }
  /** Nothing on the engine answers to this name: the caller may pull it (registry rules permitting). */
  | { kind: 'absent'; reference: string }
  /**
   * Not usable and not to be pulled: another organisation's image, or a Slipway build name that is not here.
   * Callers must treat this exactly as a missing image (same message, same phase): never reveal it exists.
   */
  | { kind: 'unavailable'; reference: string };

/** The one message for an image the caller cannot have, whether it is absent or another organisation's. */
export const imageNotFoundMessage = (reference: string) =>
  `image ${reference} was not found: it is not on the engine and could not be pulled from its registry. ` +
  'Check the repository, tag or digest, and that the registry serves it publicly.';

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

/** Does one of the engine's own names for the image (RepoTags, RepoDigests) equal `ref` after normalisation? */
function namedBy(info: Docker.ImageInspectInfo, ref: ImageReference): boolean {
  const repository = repositoryOf(ref);
  if (ref.digest) {
    return (info.RepoDigests ?? []).some((d) => {
      const parsed = tryParseImageReference(d);
      return parsed !== undefined && repositoryOf(parsed) === repository && parsed.digest === ref.digest;
    });
  }
  return (info.RepoTags ?? []).some((t) => {
    const parsed = tryParseImageReference(t);
    return parsed !== undefined && repositoryOf(parsed) === repository && parsed.tag === ref.tag;
  });
}

/**
 * What `ref` names on the engine for organisation `orgId`: use this before any engine call that would run, build
 * from (`FROM`, `COPY --from`) or pull an image on a tenant's behalf.
 *
 * - `ref` is parsed by the reference grammar first (a string that is not a reference throws ImageReferenceError,
 *   with a message fit for the caller: image IDs and ID prefixes are refused there).
 * - The engine's inspect also matches image-ID prefixes, so a hit counts only when the image's own RepoTags (or,
 *   for a digest reference, RepoDigests) contain the reference after normalisation.
 * - An image labelled `dev.slipway.org-id` belongs to that organisation; for any other it is `unavailable`.
 *
 * Engine errors other than "no such image" are rethrown (transient: let the caller retry).
 */
export async function resolveImage(
  docker: Pick<Docker, 'getImage'>,
  ref: string | ImageReference,
  orgId: string | undefined,
): Promise<ImageResolution> {
  const parsed = typeof ref === 'string' ? parseImageReference(ref) : ref;
  const reference = formatImageReference(parsed);
  let info: Docker.ImageInspectInfo | undefined;
  try {
    // The fully spelled-out name: the engine cannot take it for an ID prefix.
    info = await docker.getImage(reference).inspect();
  } catch (err) {
    if (statusCode(err) !== 404) throw err;
  }
  const owner = info?.Config?.Labels?.[LABELS.orgId];
  if (info && namedBy(info, parsed) && (owner === undefined || owner === '' || owner === orgId)) {
    return { kind: 'usable', reference, id: info.Id };
  }
  if (info || reference.startsWith(BUILT_IMAGES_REPOSITORY)) return { kind: 'unavailable', reference };
  return { kind: 'absent', reference };
}

/**
 * The image `ref` names, when it is on the engine and organisation `orgId` may use it; otherwise undefined
 * ("not present", whether absent or another organisation's). Run or build from the returned `id`, not the
 * name, so a tag moved in between cannot swap the image. Throws ImageReferenceError for a non-reference.
 */
export async function resolveUsableImage(
  docker: Pick<Docker, 'getImage'>,
  ref: string | ImageReference,
  orgId: string,
): Promise<{ reference: string; id: string } | undefined> {
  const found = await resolveImage(docker, ref, orgId);
  return found.kind === 'usable' ? { reference: found.reference, id: found.id } : undefined;
}
