import { v4 as uuidv4 } from 'uuid';

import { isDuplicateKey } from '@shared/db/mongo';
import type { DeploymentRecord, DeploymentSource, Provider } from '@shared/deployments/types';
import type { Principal } from '@shared/identity/service';
import { logFailure } from '@shared/request-context';

import { createAdmission } from './service.admission';
import type { DeploymentServiceDeps } from './service.deps';
import { type Idempotency, idFor } from './service.idempotency';
import type { SourceChecks, SourceInput } from './service.sources';
import type { VolumeAttachments, VolumeMount } from './service.volumes';
import type { DeploymentWorkflows } from './service.workflow';

export interface DeployInput {
  name: string;
  port: number;
  envVars: Record<string, string>;
  /** The body's `requestId` (its name on the wire): a retry with the same key names the same deployment. */
  idempotencyKey?: string;
  /** The organisation's default provider when absent (GET /platform/organization). */
  provider?: Provider | undefined;
  /** One of the provider's regions; the organisation's defaultRegion or the provider's first when absent. */
  region?: string | undefined;
  projectId?: string;
  /** Instances of the first release (platform API); 1 when absent. */
  replicas?: number;
  /** Volumes its first release mounts (platform API); checked and attached before the record is written. */
  volumes?: VolumeMount[];
}

/** A new deployment from an image, an upload or a Git repository: checked, admitted, recorded, then started. */
export function createDeploymentCreation(
  deps: Pick<
    DeploymentServiceDeps,
    'store' | 'env' | 'projects' | 'quota' | 'config' | 'log' | 'orgSettings' | 'cloudCredentials'
  >,
  parts: {
    workflows: DeploymentWorkflows;
    idempotency: Idempotency;
    sources: SourceChecks;
    attachments: Pick<VolumeAttachments, 'attachAtCreate'>;
  },
) {
  const { store, env } = deps;
  const { workflows, idempotency, sources, attachments } = parts;
  const admission = createAdmission(deps);

  /** Writes the queued record, then starts its workflow; returns as soon as both are durable. */
  async function create(
    principal: Principal,
    input: DeployInput,
    source: DeploymentSource,
    origin: DeploymentRecord['origin'],
  ) {
    const orgId = principal.org._id;
    const id = input.idempotencyKey ? idFor(principal, input.idempotencyKey) : uuidv4();
    // Replays are answered before the routes spend a creation budget (refuseReplay); this catches the one that
    // overtook its first request, and the insert's unique ID catches two at once.
    if (input.idempotencyKey && (await store.findAny(id)))
      await idempotency.duplicate(principal, id, input.idempotencyKey);
    const { provider, region } = await admission.admit(principal, { ...input, sourceType: source.type }, id);
    // Before the record: the first release reads them, and a refused one leaves nothing behind.
    if (input.volumes?.length) await attachments.attachAtCreate(principal, id, input.volumes, input.replicas ?? 1);
    const now = new Date();
    const record: DeploymentRecord = {
      _id: id,
      orgId,
      createdBy: principal.user._id,
      origin,
      name: input.name,
      provider,
      ...(region !== undefined ? { region } : {}),
      source,
      port: input.port,
      envNames: Object.keys(input.envVars).sort(),
      ...(Object.keys(input.envVars).length ? { envSealed: env.seal({ _id: id, orgId }, input.envVars) } : {}),
      ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
      ...(input.projectId ? { projectId: input.projectId } : {}),
      // What the first release runs; the workflow writes what actually runs from then on.
      ...(input.replicas !== undefined ? { replicas: input.replicas } : {}),
      revision: 1,
      status: 'queued',
      version: 1,
      events: [{ status: 'queued', message: 'deployment accepted', at: now }],
      createdAt: now,
      updatedAt: now,
    };
    try {
      await store.insert(record);
    } catch (err) {
      if (isDuplicateKey(err) && input.idempotencyKey) await idempotency.duplicate(principal, id, input.idempotencyKey);
      throw err;
    }
    await workflows.ensureWorkflow(record, principal);
    // Its workflow exists: the slot holds past its lease. A lost confirm costs one Temporal lookup when pruning.
    await deps.quota
      .confirm(orgId, id)
      .catch(
        logFailure(deps.log, 'quota slot not confirmed; pruning will ask Temporal about it', { deploymentId: id }),
      );
    return record;
  }

  return {
    async deployImage(
      principal: Principal,
      input: DeployInput & { image: string },
      origin: DeploymentRecord['origin'],
    ) {
      return create(principal, input, await sources.imageSource(input.image), origin);
    },

    async deploySource(principal: Principal, input: DeployInput & SourceInput, origin: DeploymentRecord['origin']) {
      return create(principal, input, await sources.builtSource(principal, input, 'INVALID_REQUEST'), origin);
    },
  };
}
