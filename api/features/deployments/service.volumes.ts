import type { Authz } from '@shared/authz/authorize';
import { ONE_WRITER } from '@shared/contracts/deployment';
import type { VolumeAttachment } from '@shared/deployments/attachments';
import { deploymentNotFound } from '@shared/deployments/errors';
import type { DeploymentStore } from '@shared/deployments/store';
import type { DeploymentRecord, DeploymentStatus } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { currentRequestId } from '@shared/request-context';
import { mountTargetError } from '@shared/volumes/mount';
import type { VolumeStore } from '@shared/volumes/store';
import type { VolumeRecord } from '@shared/volumes/types';

import type { DeploymentCommands } from './commands';

export interface VolumeMount {
  volumeId: string;
  mountPath: string;
}

/** A deployment's volume as reads show it; `name` is null only for a volume whose record is gone. */
export interface DeploymentVolume extends VolumeMount {
  name: string | null;
}

export interface VolumeAttachmentDeps {
  store: Pick<DeploymentStore, 'get' | 'attachments'>;
  volumes: Pick<VolumeStore, 'get'>;
  authz: Pick<Authz, 'authorize'>;
}

/** Statuses in which a deployment's workflow is busy with a release or a stop and takes no new release yet. */
const BUSY: DeploymentStatus[] = ['queued', 'building', 'deploying', 'stopping'];

const volumeNotFound = (id: string) =>
  new AppError('VOLUME_NOT_FOUND', `No volume ${id} in this organisation; list them with GET /platform/volumes.`, {
    volumeId: id,
  });

/**
 * The checks an attachment of volumes passes, at create and at attach: each volume is the organisation's and readable
 * by the caller (another organisation's, or one in a project the caller cannot see, is not found), ready, mounted
 * at a path a volume may take, one per path, and mounted by one instance only.
 */
export function createVolumeChecks(deps: VolumeAttachmentDeps) {
  async function readable(principal: Principal, volumeId: string): Promise<VolumeRecord> {
    const v = await deps.volumes.get(principal.org._id, volumeId);
    if (!v) throw volumeNotFound(volumeId);
    await deps.authz.authorize(principal, 'volume.read', {
      ...(v.projectId ? { projectId: v.projectId } : {}),
      notFound: () => volumeNotFound(volumeId),
    });
    return v;
  }

  /** Why the volume cannot be mounted at `mountPath` on this deployment, as an AppError. */
  async function check(principal: Principal, m: VolumeMount, replicas: number, deploymentId: string) {
    const error = mountTargetError(m.mountPath);
    if (error) throw new AppError('INVALID_REQUEST', `${error}.`, { mountPath: m.mountPath });
    const v = await readable(principal, m.volumeId);
    // Said first, as what to do differs most; the insert's unique key still decides a race.
    const holder = await deps.store.attachments.findByVolume(m.volumeId);
    if (holder && holder.deploymentId !== deploymentId)
      throw await conflict(principal, m, deploymentId, { conflict: 'taken', existing: holder });
    if (v.status !== 'ready')
      throw new AppError(
        'CONFLICT',
        `Volume ${v.name} (${v._id}) is ${v.status}, not ready: ${v.status === 'creating' ? 'wait until GET /platform/volumes/{id} reads ready, then attach it' : v.status === 'failed' ? `its storage could not be made (${v.error ?? 'no reason recorded'}); delete it and create another` : 'it is being deleted'}.`,
        { volumeId: v._id, status: v.status },
      );
    if (replicas > 1)
      throw new AppError('CONFLICT', `Deployment ${deploymentId} runs ${replicas} instances. ${ONE_WRITER}`, {
        deploymentId,
        replicas,
      });
    return v;
  }

  /** A refused insert, in words: the volume mounted elsewhere (named) or the path already taken on this deployment. */
  async function conflict(
    principal: Principal,
    m: VolumeMount,
    deploymentId: string,
    result: { conflict: 'taken' | 'slot'; existing: { deploymentId: string; kind: string } | null },
  ): Promise<AppError> {
    if (result.conflict === 'slot')
      return new AppError(
        'CONFLICT',
        `Deployment ${deploymentId} already mounts a volume at ${m.mountPath}; choose another mountPath, or detach that volume first.`,
        { deploymentId, mountPath: m.mountPath },
      );
    const other = result.existing?.deploymentId ?? '';
    if (other === deploymentId)
      return new AppError('CONFLICT', `Volume ${m.volumeId} is already attached to deployment ${deploymentId}.`, {
        deploymentId,
        volumeId: m.volumeId,
      });
    const holder = await deps.store.get(principal.org._id, other);
    return new AppError(
      'CONFLICT',
      `Volume ${m.volumeId} is attached to deployment ${holder ? `${holder.name} (${other})` : other}, and a volume has one writer: detach it there first (DELETE /platform/deployments/${other}/volumes/${m.volumeId}).`,
      { volumeId: m.volumeId, attachedTo: { deploymentId: other, ...(holder ? { name: holder.name } : {}) } },
    );
  }

  /**
   * Inserts the mounts of a deployment not yet started (its create), all or none: a refused one removes those this
   * request made. A retried create finds its own and takes them as they are.
   */
  async function attachAtCreate(principal: Principal, deploymentId: string, mounts: VolumeMount[], replicas: number) {
    const paths = new Set<string>();
    for (const m of mounts) {
      const path = m.mountPath.length > 1 ? m.mountPath.replace(/\/+$/, '') : m.mountPath;
      if (paths.has(path))
        throw new AppError('INVALID_REQUEST', `Two volumes at ${path}: give each volume a mountPath of its own.`, {
          mountPath: path,
        });
      paths.add(path);
      await check(principal, m, replicas, deploymentId);
    }
    const made: string[] = [];
    const requestId = currentRequestId();
    for (const m of mounts) {
      const result = await deps.store.attachments.insertVolume({
        deploymentId,
        orgId: principal.org._id,
        ...m,
        ...(requestId ? { requestId } : {}),
      });
      if (result.ok) made.push(m.volumeId);
      else if (!(result.conflict === 'taken' && result.existing.deploymentId === deploymentId)) {
        for (const volumeId of made) await deps.store.attachments.removeVolume(deploymentId, volumeId);
        throw await conflict(principal, m, deploymentId, result);
      }
    }
  }

  return { check, conflict, attachAtCreate };
}

/**
 * Volumes attached to and detached from a deployment: each change is an insert or a delete of its attachment, then a
 * new release of the serving code and env that copies the attachments (commands.ts `remount`).
 */
export function createVolumeAttachments(
  deps: VolumeAttachmentDeps,
  parts: { commands: Pick<DeploymentCommands, 'remount'> },
) {
  const { store } = deps;
  const checks = createVolumeChecks(deps);

  async function live(principal: Principal, id: string): Promise<DeploymentRecord> {
    const record = await store.get(principal.org._id, id);
    if (!record) throw deploymentNotFound(id);
    return record;
  }

  function notBusy(record: DeploymentRecord, what: string) {
    if (BUSY.includes(record.status))
      throw new AppError(
        'CONFLICT',
        `Deployment ${record._id} is ${record.status}, so it cannot take a new release ${what} now: wait until it is running, stopped or failed (GET /platform/deployments/${record._id}?wait=running), then try again.`,
        { deploymentId: record._id, status: record.status },
      );
  }

  async function volumesOf(principal: Principal, id: string): Promise<DeploymentVolume[]> {
    const attached = (await store.attachments.listByDeployment(id)).filter(
      (a): a is VolumeAttachment => a.kind === 'volume',
    );
    const records = await Promise.all(attached.map((a) => deps.volumes.get(principal.org._id, a.volumeId)));
    return attached.map((a, i) => ({ volumeId: a.volumeId, name: records[i]?.name ?? null, mountPath: a.mountPath }));
  }

  const count = async (id: string) =>
    (await store.attachments.listByDeployment(id)).filter((a) => a.kind === 'volume').length;

  return {
    attachAtCreate: checks.attachAtCreate,

    /** The deployment's volumes, by mount path. */
    async volumes(principal: Principal, id: string): Promise<DeploymentVolume[]> {
      await live(principal, id);
      return volumesOf(principal, id);
    },

    /** The volumes of a deployment already read (status reads). */
    volumesOf,

    /** Mounts the volume at `mountPath`: a new release with it, which the command's 202 follows. */
    async attachVolume(principal: Principal, id: string, m: VolumeMount) {
      const record = await live(principal, id);
      if (record.provider !== 'engine_local')
        throw new AppError(
          'INVALID_REQUEST',
          `Volumes are disks of this server's engine, so deployment ${id} on ${record.provider} cannot mount one; keep the data in a database or bucket the app reaches over the network.`,
          { deploymentId: id, provider: record.provider },
        );
      await checks.check(principal, m, record.replicas ?? 1, id);
      notBusy(record, 'with the volume');
      const requestId = currentRequestId();
      const result = await store.attachments.insertVolume({
        deploymentId: id,
        orgId: principal.org._id,
        ...m,
        ...(requestId ? { requestId } : {}),
      });
      if (!result.ok) throw await checks.conflict(principal, m, id, result);
      const undo = () => store.attachments.removeVolume(id, m.volumeId, requestId ? { requestId } : {});
      const accepted = await parts.commands.remount(principal, id, await count(id), undo);
      return { ...accepted, volumes: await volumesOf(principal, id) };
    },

    /** Unmounts the volume: a new release without it. The volume and its data stay. */
    async detachVolume(principal: Principal, id: string, volumeId: string) {
      const record = await live(principal, id);
      const found = await store.attachments.findByVolume(volumeId);
      if (!found || found.deploymentId !== id)
        throw new AppError(
          'VOLUME_NOT_FOUND',
          `Volume ${volumeId} is not attached to deployment ${id}; list its volumes with GET /platform/deployments/${id}/volumes.`,
          { deploymentId: id, volumeId },
        );
      notBusy(record, 'without the volume');
      await store.attachments.removeVolume(id, volumeId);
      // Refused after all: the mount is put back, as the serving release still has it.
      const undo = () =>
        store.attachments.insertVolume({
          deploymentId: id,
          orgId: found.orgId,
          volumeId,
          mountPath: found.mountPath,
          ...(found.requestId ? { requestId: found.requestId } : {}),
        });
      const accepted = await parts.commands.remount(principal, id, await count(id), undo);
      return { ...accepted, volumes: await volumesOf(principal, id) };
    },
  };
}

export type VolumeAttachments = ReturnType<typeof createVolumeAttachments>;
