import type { S3Client } from '@aws-sdk/client-s3';
import type { Client } from '@temporalio/client';
import type Docker from 'dockerode';
import type { RequestHandler } from 'express';
import type { Db } from 'mongodb';

import { type AuditStore, createAuditStore } from '@shared/audit/store';
import { type Authz, createAuthz } from '@shared/authz/authorize';
import { createGitSourceCheck, type GitSourceCheck } from '@shared/build/git-source';
import { type CloudCredentialStore, createCloudCredentialStore } from '@shared/cloud/store';
import type { Config } from '@shared/config';
import type { Database } from '@shared/db/mongo';
import { createStatusFeed, type StatusFeed } from '@shared/deployments/status-feed';
import { createPrincipalCache } from '@shared/identity/principal-cache';
import { createIdentityService, type IdentityService, type Principal } from '@shared/identity/service';
import { createIdentityStore } from '@shared/identity/store';
import { hashToken } from '@shared/identity/tokens';
import { limitRules } from '@shared/limits';
import { createKeyedLock, type KeyedLock } from '@shared/locks';
import type { Logger } from '@shared/logger';
import { createOrgSettingsStore, type OrgSettingsStore } from '@shared/org-settings/store';
import type { Permission } from '@shared/permissions';
import { createProjectStore, type ProjectStore } from '@shared/projects/store';
import type { Redis } from '@shared/redis';
import { createSalesStore } from '@shared/sales/store';
import { createEnvSealer, type EnvSealer } from '@shared/secrets/deployment-env';
import { createSecretStore } from '@shared/secrets/store';
import { createVault, type Vault } from '@shared/secrets/vault';
import { createUploadStore, type UploadStore } from '@shared/uploads/store';

import { type CanOptions, requirePermission } from './http/auth';
import { createRateLimiters, deployCreateLimit, limitKey, rateLimit, type RateLimiters } from './http/rate-limit';

/** What the api is built on; the caller opens them and closes them. */
export interface Connections {
  config: Config;
  log: Logger;
  database: Database;
  /** Rate limits, quotas, locks and the status feed (atomic where FerretDB is not). */
  redis: Redis;
  temporal: Client;
  docker: Docker;
  s3: S3Client;
}

/**
 * The shared core every feature is built on: the connections, the services more than one part of the api uses
 * (identity, access decisions, the audit trail, limits, the vault, locks, the status feed, the Git source rules,
 * the env sealer), the stores several features read, and the frame's middleware. A feature's own services are not
 * here: each feature composes them in its folder (features/<name>/compose.ts).
 */
export interface Core {
  config: Config;
  log: Logger;
  db: Db;
  redis: Redis;
  temporal: Client;
  docker: Docker;
  s3: S3Client;
  limiters: RateLimiters;
  identity: IdentityService;
  /** The one access decision (shared/authz): scopes, org role, project role. */
  authz: Authz;
  /** The append-only audit trail every mutating route writes to (api/http/audit.ts). */
  auditTrail: AuditStore;
  vault: Vault;
  /** Serialises a change that must keep an invariant across documents (a project keeps an admin), per key. */
  lock: KeyedLock;
  /** Status changes and destroys, announced to the event streams and `?wait=` reads of every api process. */
  statusFeed: StatusFeed;
  /** The rules a Git source is held to wherever one is named (a source deploy, a project, a builder push). */
  gitSource: GitSourceCheck;
  /** Seals a deployment's environment values at rest (and opens them for a redeploy). */
  envSealer: EnvSealer;
  /** Projects and their members: authz, deployments and the builder read them, the projects feature writes them. */
  projectStore: ProjectStore;
  /** Uploaded zips: the uploads feature writes them, a source deploy reads them. */
  uploadStore: UploadStore;
  /**
   * The organisation's settings (versioned): the organization feature writes them; deploys, tokens and the builder
   * sandbox act on them, so they sit here rather than in a feature listed after those.
   */
  orgSettings: OrgSettingsStore;
  /**
   * Organisations' cloud credentials (sealed; the api keeps candidates and reads summaries, the worker opens them): the
   * providers feature writes them, deploys and settings read which clouds and regions an organisation has.
   */
  cloudCredentials: CloudCredentialStore;
  /** The seller a sales API key belongs to: the entitlement lookup origin authenticates by it. */
  sellerOfKey: (apiKey: string) => Promise<string | undefined>;
  /**
   * Refuses the request unless `permission` is granted (shared/authz): 403 INSUFFICIENT_SCOPE naming what is
   * missing, or 404 for a project the caller cannot see. A route whose resource lives in a project says how to find
   * it — `can('project.update', { project: projectFrom.param('id') })` — and is then judged by the project role too.
   */
  can: (permission: Permission, opts?: CanOptions) => RequestHandler;
  /** Compat budgets per organisation, and deployment creation per user on every origin. */
  limit: {
    compatReads: RequestHandler;
    compatWrites: RequestHandler;
    compatUploads: RequestHandler;
    deployCreate: RequestHandler;
  };
}

/** Builds the shared core from the connections (its stores' indexes made before the api serves). */
export async function composeCore(c: Connections): Promise<Core> {
  const { db } = c.database;
  const identityStore = createIdentityStore(db);
  const secretStore = createSecretStore(db);
  const auditStore = createAuditStore(db);
  const projectStore = createProjectStore(db);
  const uploadStore = createUploadStore(db);
  const orgSettings = createOrgSettingsStore(db);
  const cloudCredentials = createCloudCredentialStore(db, c.config.SECRETS_KEY);
  // Sequential on purpose: FerretDB handles concurrent index builds poorly.
  for (const store of [
    identityStore,
    uploadStore,
    secretStore,
    auditStore,
    projectStore,
    orgSettings,
    cloudCredentials,
  ])
    await store.ensureIndexes();
  const limiters = createRateLimiters(c.redis, c.config.REDIS_KEY_PREFIX, limitRules(c.config));
  const vault = createVault({ store: secretStore, key: c.config.SECRETS_KEY });
  const authz = createAuthz({ members: projectStore });
  // The sales feature indexes this collection; the lookup by key hash only reads it.
  const sellers = createSalesStore(db);
  return {
    config: c.config,
    log: c.log,
    db,
    redis: c.redis,
    temporal: c.temporal,
    docker: c.docker,
    s3: c.s3,
    limiters,
    identity: createIdentityService({
      store: identityStore,
      // Every request authenticates: its principal comes from memory, its changes are announced through Redis.
      cache: createPrincipalCache<Principal>({ redis: c.redis, keyPrefix: c.config.REDIS_KEY_PREFIX, log: c.log }),
    }),
    authz,
    auditTrail: auditStore,
    vault,
    lock: createKeyedLock(c.redis, c.config.REDIS_KEY_PREFIX),
    statusFeed: createStatusFeed({ redis: c.redis, keyPrefix: c.config.REDIS_KEY_PREFIX, log: c.log }),
    gitSource: createGitSourceCheck({ vault, config: c.config }),
    envSealer: createEnvSealer(c.config.SECRETS_KEY),
    projectStore,
    uploadStore,
    orgSettings,
    cloudCredentials,
    sellerOfKey: async (apiKey) => (await sellers.findSellerByKeyHash(hashToken(apiKey)))?._id,
    can: (permission, opts) => requirePermission(authz, permission, opts),
    limit: {
      compatReads: rateLimit(limiters.compatReads, limitKey.org),
      compatWrites: rateLimit(limiters.compatWrites, limitKey.org),
      compatUploads: rateLimit(limiters.compatUploads, limitKey.org),
      deployCreate: deployCreateLimit(limiters),
    },
  };
}
