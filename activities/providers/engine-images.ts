import { activityInfo, heartbeat, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import { deploymentWorkflowId } from '@shared/contracts/deployment';
import { EngineRequestRefused } from '@shared/engine/docker-client';
import { BUILT_IMAGES_REPOSITORY, imageNotFoundMessage, resolveImage } from '@shared/images/ownership';
import { registryUnreachableMessage, unreachableReason } from '@shared/images/pull-failure';
import {
  formatImageReference,
  type ImageReference,
  ImageReferenceError,
  parseImageReference,
} from '@shared/images/reference';
import { registryRefusal } from '@shared/images/registry-guard';

import { PROVIDER_FAILURES } from './provider';

/**
 * Bad input is a failed deploy, never a retry: the api validates too, but workflows started by older code or by
 * hand reach the worker unvalidated.
 */
function parseOrFail(image: string): ImageReference {
  try {
    return parseImageReference(image);
  } catch (err) {
    if (err instanceof ImageReferenceError) {
      throw ApplicationFailure.create({ nonRetryable: true, type: 'InvalidImageReference', message: err.message });
    }
    throw err;
  }
}

/** A full image ID as the engine reports it; never a prefix (the engine would match any image starting so). */
const IMAGE_ID = /^sha256:[0-9a-f]{64}$/;

const notFound = (reference: string) =>
  ApplicationFailure.create({ nonRetryable: true, type: 'ImageNotFound', message: imageNotFoundMessage(reference) });

/** An engine call the client refused is the input's fault: fail the deploy plainly, do not retry it. */
function refusedToFailure(err: unknown): never {
  if (err instanceof EngineRequestRefused) {
    throw ApplicationFailure.create({ nonRetryable: true, type: 'EngineRequestRefused', message: err.message });
  }
  throw err;
}

const unreachable = (reference: string, ref: ImageReference, reason: string) =>
  ApplicationFailure.create({
    nonRetryable: true,
    type: PROVIDER_FAILURES.imageRegistryUnreachable,
    message: registryUnreachableMessage(reference, ref.registryHost, reason),
  });

/**
 * Pulls `reference`; the engine's own words go to the worker log only (they can carry registry internals). Returns
 * why no registry answered, when that is why it failed.
 */
async function pull(docker: Docker, reference: string): Promise<string | undefined> {
  try {
    const stream = await docker.pull(reference);
    await new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(
        stream,
        (e, output: { error?: string }[] | undefined) => {
          const failed = e ?? output?.find((o) => o.error)?.error;
          if (failed) reject(failed instanceof Error ? failed : new Error(String(failed)));
          else resolve();
        },
        () => heartbeat(),
      ),
    );
    return undefined;
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    log.warn('image pull failed', { reference, error });
    return unreachableReason(error);
  }
}

/**
 * Whether the registry of an image another organisation holds here is unreachable, asked without pulling (a pull
 * would move the tag off the owner's image): an absent image at an unreachable registry says so, and this one must
 * fail exactly the same way.
 */
async function registryUnreachable(docker: Docker, reference: string): Promise<string | undefined> {
  try {
    await docker.getImage(reference).distribution({});
    return undefined;
  } catch (err) {
    if (err instanceof EngineRequestRefused) return undefined;
    return unreachableReason(err instanceof Error ? err.message : String(err));
  }
}

/**
 * Workflows started before ensureImage took the organisation call it with the image alone. Their own build (labelled
 * with their deployment ID, which the workflow ID carries) tells which organisation they deploy for; any other
 * labelled image stays unusable to them.
 */
async function legacyCallerOrg(docker: Docker, ref: ImageReference): Promise<string | undefined> {
  const workflowId = activityInfo().workflowExecution?.workflowId;
  const labels = await docker
    .getImage(formatImageReference(ref))
    .inspect()
    .then(
      (info) => info.Config?.Labels ?? {},
      (err: unknown): Record<string, string> => {
        // Not on the engine: no build of theirs, so no organisation (ensureImage then pulls or refuses it).
        if ((err as { statusCode?: number }).statusCode === 404) return {};
        throw err;
      },
    );
  return workflowId === deploymentWorkflowId(labels[LABELS.deploymentId] ?? '') ? labels[LABELS.orgId] : undefined;
}

/** The deploy's image: only a reference the org may use, only pulled from registries that may be contacted. */
export function createEngineImages({
  docker,
  allowPrivateRegistries,
}: {
  docker: Docker;
  allowPrivateRegistries: boolean;
}) {
  return {
    /**
     * Uses the local image when it is there and the org's to use, pulls it otherwise. Another organisation's image
     * fails exactly as an absent one does (same type, message and phase).
     */
    async ensureImage(image: string, orgId?: string): Promise<{ pulled: boolean }> {
      const ref = parseOrFail(image);
      orgId ??= await legacyCallerOrg(docker, ref);
      const found = await resolveImage(docker, ref, orgId).catch(refusedToFailure);
      if (found.kind === 'usable') return { pulled: false };
      const refusal = await registryRefusal(ref, { allowPrivateRegistries });
      if (found.kind === 'unavailable') {
        // Slipway's own build names are never pulled, so for them no registry is ever asked.
        const asked = !refusal && !found.reference.startsWith(BUILT_IMAGES_REPOSITORY);
        const reason = asked ? await registryUnreachable(docker, found.reference) : undefined;
        throw reason ? unreachable(found.reference, ref, reason) : notFound(found.reference);
      }
      if (refusal)
        throw ApplicationFailure.create({ nonRetryable: true, type: 'ImageRegistryRefused', message: refusal });
      const reason = await pull(docker, found.reference);
      if (reason) throw unreachable(found.reference, ref, reason);
      // A pulled image is held to the same rule as a local one (its labels come from whoever pushed it).
      const pulled = await resolveImage(docker, ref, orgId).catch(refusedToFailure);
      if (pulled.kind !== 'usable') throw notFound(found.reference);
      return { pulled: true };
    },

    /**
     * The image ID to create the container from, checked again at the moment of use: the tag may have moved
     * since ensureImage, and the container must run exactly what the check allowed.
     */
    async usableImageId(image: string, orgId: string): Promise<string> {
      const ref = parseOrFail(image);
      const found = await resolveImage(docker, ref, orgId).catch(refusedToFailure);
      if (found.kind !== 'usable') throw notFound(found.reference);
      return found.id;
    },

    /**
     * A release's recorded image, by its full ID: the tag may have moved on or the registry be gone since (rollback).
     * The ID comes from the workflow's own release record, which was checked for the org when it was made; an
     * image another organisation owns is still refused, and any refusal reads as the reference not being found.
     */
    async usableReleaseImage(image: string, imageId: string, orgId: string): Promise<string> {
      const ref = parseOrFail(image);
      if (!IMAGE_ID.test(imageId)) throw notFound(formatImageReference(ref));
      const info = await docker
        .getImage(imageId)
        .inspect()
        .catch((err: unknown) => {
          if ((err as { statusCode?: number }).statusCode === 404) return undefined;
          return refusedToFailure(err);
        });
      const owner = info?.Config?.Labels?.[LABELS.orgId];
      if (!info || info.Id !== imageId || (owner && owner !== orgId)) throw notFound(formatImageReference(ref));
      return info.Id;
    },

    /**
     * Removes this deployment's own images (labelled with it: its builds) outside `keep` that no container uses.
     * Images it did not build carry no deployment label and are never touched.
     */
    async pruneImages(deploymentId: string, keep: string[]): Promise<{ removed: string[] }> {
      const kept = new Set(keep);
      const inUse = new Set((await docker.listContainers({ all: true })).map((c) => c.ImageID));
      const images = await docker.listImages({ filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] } });
      const removed: string[] = [];
      for (const image of images) {
        if (kept.has(image.Id) || inUse.has(image.Id)) continue;
        try {
          // Forced: a build tagged twice is one image; unforced, the engine refuses an ID with several tags.
          await docker.getImage(image.Id).remove({ force: true });
          removed.push(image.Id);
        } catch (err) {
          // Gone already, or a container started from it since the listing: either way it is not ours to remove.
          const code = (err as { statusCode?: number }).statusCode;
          if (code !== 404 && code !== 409) throw err;
        }
      }
      return { removed };
    },
  };
}
