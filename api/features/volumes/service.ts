import { randomUUID } from 'node:crypto';

import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateStage,
} from '@temporalio/client';

import type { Authz } from '@shared/authz/authorize';
import {
  deleteVolumeUpdate,
  VOLUME_WORKFLOW,
  volumeWorkflowId,
  type VolumeWorkflowInput,
} from '@shared/contracts/volume';
import type { DeploymentStore } from '@shared/deployments/store';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';
import { PLAN_POLICIES } from '@shared/plans';
import type { ProjectStore } from '@shared/projects/store';
import { currentRequestId } from '@shared/request-context';
import { isWaitOver } from '@shared/temporal';
import type { VolumeStore } from '@shared/volumes/store';
import type { VolumeRecord } from '@shared/volumes/types';
import { volumeWorkflowVisibility } from '@shared/volumes/visibility';

import { insertWithinPlan, listVisible } from '../owned';

export interface VolumeServiceDeps {
  store: VolumeStore;
  projects: Pick<ProjectStore, 'get'>;
  authz: Pick<Authz, 'visibility' | 'sees'>;
  temporal: Client;
  lock: KeyedLock;
  taskQueue: string;
  /** Multiplies the plan's volume count and total size (QUOTA_MULTIPLIER). */
  quotaMultiplier: number;
  /** How long a delete waits for the volume's workflow to take it before answering anyway (as deployment commands). */
  acceptWaitMs: number;
  /** Which deployment mounts a volume: a delete waits until it is detached. */
  deployments: Pick<DeploymentStore, 'get' | 'attachments'>;
}

export const volumeNotFound = (id: string) =>
  new AppError('VOLUME_NOT_FOUND', `No volume ${id} in this organisation; list them with GET /platform/volumes.`, {
    volumeId: id,
  });

/**
 * Persistent volumes as the api keeps them: the record, and the volume's workflow (`volume/<id>`), which makes its
 * storage, holds it while the volume exists and removes it on delete. Plan limits are checked under a per-org lock
 * (FerretDB has no atomic read-modify-write: two creations at once must not both pass the last free slot).
 */
export function createVolumeService(deps: VolumeServiceDeps) {
  const { store } = deps;

  async function get(principal: Principal, id: string): Promise<VolumeRecord> {
    const v = await store.get(principal.org._id, id);
    if (!v) throw volumeNotFound(id);
    return v;
  }

  /** The deployment that mounts the volume now, if one does (a destroyed deployment's mount is not counted). */
  async function holderOf(principal: Principal, id: string) {
    const attached = await deps.deployments.attachments.findByVolume(id);
    const holder = attached && (await deps.deployments.get(principal.org._id, attached.deploymentId));
    return attached && holder
      ? { deploymentId: holder._id, deploymentName: holder.name, mountPath: attached.mountPath }
      : null;
  }

  async function startWorkflow(v: VolumeRecord, principal: Principal): Promise<void> {
    const input: VolumeWorkflowInput = { volumeId: v._id, orgId: v.orgId, sizeGb: v.sizeGb };
    try {
      await deps.temporal.workflow.start(VOLUME_WORKFLOW, {
        taskQueue: deps.taskQueue,
        workflowId: volumeWorkflowId(v._id),
        // A run that failed may be started again; one that completed removed the volume, record and all.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        args: [input],
        ...volumeWorkflowVisibility(v, principal.org),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  return {
    get,

    /** The record (status creating) and its workflow, within the plan's count and total size. */
    async create(
      principal: Principal,
      body: { name: string; sizeGb: number; projectId?: string | undefined },
    ): Promise<VolumeRecord> {
      const orgId = principal.org._id;
      // The route judged the caller's role in the project; it must also be this organisation's.
      if (body.projectId && !(await deps.projects.get(orgId, body.projectId)))
        throw new AppError('PROJECT_NOT_FOUND', `No project ${body.projectId} in this organisation.`, {
          projectId: body.projectId,
        });
      const plan = PLAN_POLICIES[principal.org.plan].volumes;
      const limits = {
        maxCount: plan.maxCount * deps.quotaMultiplier,
        maxTotalGb: plan.maxTotalGb * deps.quotaMultiplier,
      };
      const now = new Date();
      const record: VolumeRecord = {
        _id: randomUUID(),
        orgId,
        projectId: body.projectId ?? null,
        name: body.name,
        sizeGb: body.sizeGb,
        status: 'creating',
        error: null,
        createdBy: principal.user._id,
        createdAt: now,
        updatedAt: now,
      };
      await insertWithinPlan({
        lock: deps.lock,
        key: `volumes:${orgId}`,
        what: 'volume quota',
        over: async () => {
          const usage = await store.usage(orgId);
          if (usage.count + 1 <= limits.maxCount && usage.totalGb + body.sizeGb <= limits.maxTotalGb) return undefined;
          return new AppError(
            'QUOTA_EXCEEDED',
            `The ${principal.org.plan} plan allows ${limits.maxCount} volumes of ${limits.maxTotalGb} GB in all; this organisation has ${usage.count} of ${usage.totalGb} GB, so ${body.sizeGb} GB more is refused: delete a volume or choose a smaller size.`,
            { ...limits, count: usage.count, totalGb: usage.totalGb },
          );
        },
        insert: () => store.insert(record),
        taken: () =>
          new AppError(
            'CONFLICT',
            `A volume named ${body.name} exists in this organisation; choose another name or use that one.`,
            { name: body.name },
          ),
      });
      // A start that fails leaves the record creating; the next read shows it, and a delete removes it whole.
      await startWorkflow(record, principal);
      return record;
    },

    /** By name: every volume for org owners and admins, the organisation's and your projects' otherwise. */
    /** A volume with the deployment that mounts it (null when none does): what a person checks before deleting. */
    async getWithHolder(principal: Principal, id: string) {
      const v = await get(principal, id);
      return { volume: v, attachedTo: await holderOf(principal, id) };
    },

    async list(principal: Principal, q: { projectId?: string | undefined; limit: number; offset: number }) {
      return listVisible(deps.authz, principal, q, (filter) => store.list(principal.org._id, filter));
    },

    /**
     * Asks the volume's workflow to remove its storage and record. Answered once the workflow took the request (or,
     * with no worker running, after the wait): the volume then reads `deleting`, and 404 once it is gone.
     */
    async remove(principal: Principal, id: string): Promise<VolumeRecord> {
      const v = await get(principal, id);
      // A destroyed deployment's attachment goes once its containers are gone; until then the storage's own delete
      // refuses while a container mounts it.
      const holder = await holderOf(principal, id);
      if (holder)
        throw new AppError(
          'VOLUME_ATTACHED',
          `Volume ${v.name} is mounted by deployment ${holder.deploymentName} (${holder.deploymentId}) at ${holder.mountPath}; detach it first with DELETE /platform/deployments/${holder.deploymentId}/volumes/${id}, then delete it.`,
          { volumeId: id, ...holder },
        );
      const ask = () =>
        deps.temporal.workflow.withDeadline(new Date(Date.now() + deps.acceptWaitMs), () =>
          deps.temporal.workflow.getHandle(volumeWorkflowId(id)).startUpdate(deleteVolumeUpdate, {
            // The request's ID: a retried request is the same delete, a new request a new one. One ID per volume
            // would make every later delete the first one again, which Temporal answers without running it.
            updateId: `delete:${currentRequestId() ?? randomUUID()}`,
            waitForStage: WorkflowUpdateStage.ACCEPTED,
          }),
        );
      try {
        await ask().catch(async (err: unknown) => {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          // Its workflow never started (a creation cut short) or its run failed: start one, and ask it.
          await startWorkflow(v, principal);
          await ask();
        });
      } catch (err) {
        // Temporal holds the request for the workflow, which has not taken it yet (no worker runs, or none has come
        // to it): the answer is the same, and the volume reads deleting once it does.
        if (!isWaitOver(err)) throw err;
      }
      return { ...v, status: 'deleting', updatedAt: new Date() };
    },
  };
}

export type VolumeService = ReturnType<typeof createVolumeService>;
