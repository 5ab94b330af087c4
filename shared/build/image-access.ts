import type Docker from 'dockerode';

import { imageNotFoundMessage, resolveImage } from '../images/ownership';
import { type ImageReference, ImageReferenceError, parseImageReference } from '../images/reference';
import { registryRefusal } from '../images/registry-guard';
import { DockerfileRefusedError, type ImageUse, inspectOnbuildTrigger } from './dockerfile-policy';

export interface ImageAccessOptions {
  orgId: string;
  /** Registries on private addresses (private installations); otherwise the engine never contacts one. */
  allowPrivateRegistries: boolean;
}

/**
 * Checks every image a Dockerfile would make the engine read, before the engine reads it: a valid reference (no
 * image IDs or ID prefixes), no registry on a private address, never another organisation's build (answered
 * exactly as an image that does not exist), and no ONBUILD trigger of a base image that would fetch a URL or read
 * such an image.
 */
export async function assertImagesUsable(docker: Docker, uses: ImageUse[], opts: ImageAccessOptions): Promise<void> {
  const seen = new Set<string>();
  const check = async (use: ImageUse, depth: number): Promise<void> => {
    const where = `line ${use.line} (${use.instruction})`;
    let ref: ImageReference;
    try {
      ref = parseImageReference(use.ref);
    } catch (err) {
      if (err instanceof ImageReferenceError) throw new DockerfileRefusedError(`${where}: ${err.message}`);
      throw err;
    }
    const refusal = await registryRefusal(ref, { allowPrivateRegistries: opts.allowPrivateRegistries });
    if (refusal) throw new DockerfileRefusedError(`${where}: ${refusal}`);
    const found = await resolveImage(docker, ref, opts.orgId);
    // The same words for another organisation's image as for one that exists nowhere.
    if (found.kind === 'unavailable') {
      throw new DockerfileRefusedError(`${where}: ${imageNotFoundMessage(use.ref)}`);
    }
    if (found.kind === 'absent' || seen.has(found.id) || depth > 8) return;
    seen.add(found.id);
    const info = await docker.getImage(found.id).inspect();
    for (const trigger of info.Config?.OnBuild ?? []) {
      let triggered: ImageUse[];
      try {
        triggered = inspectOnbuildTrigger(trigger);
      } catch (err) {
        if (!(err instanceof DockerfileRefusedError)) throw err;
        const why = err.message.replace(/^line \d+ \([^)]*\): /, '');
        throw new DockerfileRefusedError(`${where}: the image ${use.ref} has an ONBUILD step that is refused: ${why}`);
      }
      for (const t of triggered)
        await check({ ...t, line: use.line, instruction: `${use.instruction} ONBUILD` }, depth + 1);
    }
  };
  for (const use of uses) await check(use, 0);
}
