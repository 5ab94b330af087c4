import type { Authz } from '@shared/authz/authorize';
import type { BlobStore } from '@shared/builder/files';
import type { PublicationRecord, PublicationStore } from '@shared/builder/publish-store';
import type { CheckpointRecord, Session } from '@shared/builder/types';
import type { Config } from '@shared/config';
import { deploymentNotFound } from '@shared/deployments/errors';
import type { DeploymentRecord } from '@shared/deployments/types';
import { deploymentUrl, edgeAddressing, nameLabel } from '@shared/edge';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';
import type { ProjectFile } from '@shared/uploads/files';

import type { Limiter } from '../../http/rate-limit';
import { consumeLimit } from '../../mcp/limit';
import type { CommandAccepted } from '../deployments/commands';
import type { DeploymentService } from '../deployments/service';
import type { UploadService } from '../uploads/service';
import { sessionNotFound } from './access';
import type { BuilderService } from './service';

/** Blobs read at once while a checkpoint is zipped: enough to hide S3's latency, few enough to spare its pool. */
const BLOB_READS = 8;
/** The statuses of a deployment's first deploy still on its way: a publish then has nothing new to send. */
const FIRST_DEPLOY = ['queued', 'building', 'deploying'];

/** What a publish did: the deployment it went to, and the command to follow when it shipped a new release. */
export interface Published {
  session: Session;
  checkpoint: CheckpointRecord;
  deployment: DeploymentRecord;
  /** Where the deployment answers (known from its name and ID before its first release runs). */
  url: string | null;
  created: boolean;
  uploadId: string | null;
  command: CommandAccepted['command'] | null;
}

/**
 * Publishing a builder session (docs/architecture.md, "AI builder"): the head checkpoint's files, exactly, zipped
 * into an upload of the session's org and deployed as any uploaded zip is (the same build, limits and isolation).
 * The first publish creates the deployment (a creation, counted as any deploy's); every later one is its next
 * release at the same URL. Which deployment a session publishes to is an immutable record (publish-store.ts), and
 * publishes of one session run one at a time under a Redis lock, so two first publishes make one deployment.
 */
export function createBuilderPublisher(deps: {
  builder: Pick<BuilderService, 'load'>;
  blobs: Pick<BlobStore, 'get'>;
  publications: PublicationStore;
  deployments: Pick<DeploymentService, 'get' | 'deploymentIdFor' | 'idempotencyKeyUsed' | 'deploySource' | 'redeploy'>;
  uploads: Pick<UploadService, 'pack' | 'acceptPacked'>;
  authz: Pick<Authz, 'authorize'>;
  lock: KeyedLock;
  /** The per-user deployment creation budget the deploy routes spend. */
  creations: Limiter;
  config: Pick<Config, 'EDGE_DOMAIN' | 'EDGE_PORT'>;
}) {
  const { deployments, publications } = deps;

  /** The checkpoint's files, read from the content-addressed store (each checked against its digest). */
  async function filesOf(orgId: string, checkpoint: CheckpointRecord): Promise<ProjectFile[]> {
    const out: ProjectFile[] = new Array<ProjectFile>(checkpoint.files.length);
    let next = 0;
    const reader = async () => {
      for (let i = next++; i < checkpoint.files.length; i = next++) {
        const f = checkpoint.files[i]!;
        out[i] = { path: f.path, bytes: await deps.blobs.get(orgId, f.sha256) };
      }
    };
    await Promise.all(Array.from({ length: Math.min(BLOB_READS, checkpoint.files.length) }, reader));
    return out;
  }

  /** The org's live deployment, or undefined when it was destroyed (or never made). */
  const live = (p: Principal, id: string) =>
    deployments.get(p, id).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND') return undefined;
      throw err;
    });

  /** A deployment the caller names: one it may deploy to, in the session's project. */
  async function named(p: Principal, s: Session, id: string): Promise<DeploymentRecord> {
    const d = await deployments.get(p, id);
    await deps.authz.authorize(p, 'deployment.create', {
      ...(d.projectId ? { projectId: d.projectId } : {}),
      notFound: () => deploymentNotFound(id),
    });
    if (d.projectId !== s.projectId)
      throw new AppError(
        'INVALID_REQUEST',
        `Deployment ${id} is not in this session's project ${s.projectId}; name a deployment of that project, or leave deploymentId out to create one.`,
        { deploymentId: id, projectId: s.projectId },
      );
    return d;
  }

  const urlOf = (d: DeploymentRecord) =>
    d.url ?? (d.provider === 'engine_local' ? deploymentUrl(d.name, d._id, edgeAddressing(deps.config)) : null);

  return {
    async publish(p: Principal, sessionId: string, body: { deploymentId?: string }): Promise<Published> {
      const s = await deps.builder.load(p, sessionId, 'write');
      // Publishing deploys: the caller needs the deploy permission in the session's project too.
      await deps.authz.authorize(p, 'deployment.create', {
        projectId: s.projectId,
        notFound: () => sessionNotFound(sessionId),
      });
      const checkpoint = s.head;
      if (!checkpoint)
        throw new AppError('INVALID_REQUEST', 'The session has no files to publish yet; save some first.', {});
      // Held to an uploaded zip's caps like any other source (a checkpoint's own caps are smaller).
      const packed = await deps.uploads.pack(await filesOf(s.orgId, checkpoint), { inline: false });
      const upload = () => deps.uploads.acceptPacked(p, packed, `builder-${s._id}-${checkpoint.seq}.zip`);
      const done = (d: DeploymentRecord, r: Pick<Published, 'created' | 'uploadId' | 'command'>): Published => ({
        session: s,
        checkpoint,
        deployment: d,
        url: urlOf(d),
        ...r,
      });

      const release = async (d: DeploymentRecord, current: PublicationRecord | undefined) => {
        // A first deploy of this very checkpoint still on its way (a second click, a concurrent publish): it is
        // what this publish would ship, and a redeploy would be refused until it ends.
        if (FIRST_DEPLOY.includes(d.status) && current?.checkpointId === checkpoint._id)
          return done(d, { created: false, uploadId: null, command: null });
        const u = await upload();
        const accepted = await deployments.redeploy(p, d._id, { uploadId: u._id });
        return done(accepted.deployment, { created: false, uploadId: u._id, command: accepted.command });
      };

      const create = async (record: PublicationRecord) => {
        await consumeLimit(deps.creations, `user:${p.user._id}`);
        const u = await upload();
        const d = await deployments.deploySource(
          p,
          {
            name: nameLabel(s.title),
            port: 8080,
            envVars: {},
            provider: 'engine_local',
            projectId: s.projectId,
            idempotencyKey: record.idempotencyKey!,
            uploadId: u._id,
          },
          'platform',
        );
        return done(d, { created: true, uploadId: u._id, command: null });
      };

      return deps.lock(`builder-publish:${s._id}`, `the publishing of session ${s._id}`, async () => {
        for (;;) {
          const current = await publications.current(s.orgId, s._id);
          if (current) {
            const d = await live(p, current.deploymentId);
            if (d) {
              if (body.deploymentId !== undefined && body.deploymentId !== d._id)
                throw new AppError(
                  'CONFLICT',
                  `This session publishes to deployment ${d._id}; leave deploymentId out (or name that one) to publish there.`,
                  { deploymentId: d._id },
                );
              return release(d, current);
            }
            // Recorded but never made: the publish that recorded it stopped before the creation; finish it.
            if (current.idempotencyKey && !(await deployments.idempotencyKeyUsed(p, current.idempotencyKey)))
              return create(current);
            // Otherwise it was destroyed: the session publishes to a new target, recorded after it.
          }
          const seq = (current?.seq ?? 0) + 1;
          const base = { sessionId: s._id, orgId: s.orgId, seq, checkpointId: checkpoint._id, createdBy: p.user._id };
          if (body.deploymentId !== undefined) {
            const d = await named(p, s, body.deploymentId);
            if (await publications.insert({ ...base, deploymentId: d._id, createdAt: new Date() }))
              return release(d, undefined);
          } else {
            const idempotencyKey = `builder-publish:${s._id}:${seq}`;
            const record = {
              ...base,
              deploymentId: deployments.deploymentIdFor(p, idempotencyKey),
              idempotencyKey,
              createdAt: new Date(),
            };
            if (await publications.insert(record)) return create({ _id: `${s._id}:${seq}`, ...record });
          }
          // Another publish (past the lock's expiry) recorded this seq first: follow what it recorded.
        }
      });
    },
  };
}

export type BuilderPublisher = ReturnType<typeof createBuilderPublisher>;
