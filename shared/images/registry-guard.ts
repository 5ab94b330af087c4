import { OutboundTargetError, resolveTarget } from '../net-guard';
import { DEFAULT_REGISTRY, type ImageReference, ImageReferenceError, parseImageReference } from './reference';

/**
 * Why the engine must not pull from `ref`'s registry, or undefined. The engine daemon contacts that host itself,
 * from the host's network: `127.0.0.1:8233/x` would reach the Temporal UI, `169.254.169.254/x` the cloud
 * metadata service. docker.io is the engine's own default and never private. `allowPrivateRegistries` opens
 * loopback and private networks only: link-local and metadata addresses stay refused.
 */
export async function registryRefusal(
  ref: Pick<ImageReference, 'registryHost'>,
  opts: { allowPrivateRegistries: boolean },
): Promise<string | undefined> {
  if (ref.registryHost === DEFAULT_REGISTRY) return undefined;
  let url: URL;
  try {
    url = new URL(`https://${ref.registryHost}/`);
  } catch {
    return `the registry host ${ref.registryHost} is not a valid host name`;
  }
  try {
    await resolveTarget(url, { allowPrivate: opts.allowPrivateRegistries });
    return undefined;
  } catch (err) {
    if (!(err instanceof OutboundTargetError)) throw err;
    if (err.kind === 'unresolvable') {
      // Where private registries are allowed, the engine's resolver may know a name this process does not: it
      // tries, and a failed pull says the registry could not be reached. Elsewhere a name that resolves nowhere
      // is a registry nobody can reach, not a private one.
      if (opts.allowPrivateRegistries) return undefined;
      return `the registry ${ref.registryHost} could not be reached (its host name does not resolve): check the image reference`;
    }
    return `images from the registry ${ref.registryHost} are refused: ${err.reason}; only public registries are allowed`;
  }
}

/**
 * Why an image deploy of `image` must be refused before it is accepted (a message for the caller), or undefined:
 * not a reference by the grammar, or a registry on a private address. The worker checks both again.
 */
export async function imageDeployRefusal(
  image: string,
  opts: { allowPrivateRegistries: boolean },
): Promise<string | undefined> {
  let ref: ImageReference;
  try {
    ref = parseImageReference(image);
  } catch (err) {
    if (err instanceof ImageReferenceError) return err.message;
    throw err;
  }
  return registryRefusal(ref, opts);
}
