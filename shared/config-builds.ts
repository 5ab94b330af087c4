import { z } from 'zod';

/** A switch as operators write one: true/false, 1/0, yes/no. */
export const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/**
 * The settings of what turns source into a running app (Git fetches, builds, their base images) and of the AI
 * builder (model providers, preview sandboxes): part of the one configuration shared/config.ts reads.
 */
export const SOURCE_AND_BUILDER_SETTINGS = {
  /** Git hosts on loopback or private networks are refused unless this is set (tests serve repositories locally). */
  ALLOW_PRIVATE_GIT_HOSTS: bool.default(false),
  GIT_CLONE_TIMEOUT_S: z.coerce.number().int().min(1).default(120),
  /** A clone that grows past this is stopped and the deploy fails. */
  GIT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(500 * 1024 * 1024),
  /** Fetching, extracting and building together; the deploy fails when it passes this. */
  BUILD_TIMEOUT_S: z.coerce.number().int().min(1).default(900),
  BUILD_MAX_ENTRIES: z.coerce.number().int().min(1).default(20_000),
  BUILD_MAX_UNCOMPRESSED_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 * 1024 * 1024),
  /**
   * Base images of generated Dockerfiles (sources without their own): Slipway's own, built on this machine
   * (scripts/stack/base-images/, no registry needed); production may name public images instead.
   */
  BUILD_BASE_IMAGE_NODE: z.string().min(1).default('slipway/node'),
  BUILD_BASE_IMAGE_STATIC: z.string().min(1).default('slipway/static'),
  BUILD_BASE_IMAGE_PYTHON: z.string().min(1).default('slipway/python'),
  /** Scratch space of source builds on the worker's host; each build's directory is removed when it ends. */
  BUILD_WORK_DIR: z.string().min(1).optional(),
  /**
   * Build sandbox (docs/architecture.md, "Builds and images"): builds at once on one worker, and for one organisation
   * on one worker.
   */
  BUILD_CONCURRENCY: z.coerce.number().int().min(1).default(2),
  BUILD_CONCURRENCY_PER_ORG: z.coerce.number().int().min(1).default(1),

  // AI providers of the builder (shared/ai, shared/ai-providers; docs/architecture.md, "AI builder").
  /**
   * A provider whose baseUrl names a loopback/private/special address is refused unless this is set: the worker
   * connects to it from the host's own network (tests run provider doubles on loopback; a self-hosted model server
   * on the LAN needs it too).
   */
  ALLOW_PRIVATE_AI_PROVIDERS: bool.default(false),
  /** Retries of a rate-limited (429) or overloaded (529, 5xx) model call before the turn ends with its error. */
  AI_RETRY_ATTEMPTS: z.coerce.number().int().min(0).max(10).default(3),
  /** Longest wait before one retry; a provider asking (retry-after) for longer ends the turn with rate_limited. */
  AI_RETRY_MAX_DELAY_S: z.coerce.number().min(0).max(600).default(30),
  /** A provider silent this long (no response headers, or no byte of a stream) is given up as unavailable. */
  AI_IDLE_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(120),

  // Builder sandboxes (live previews, workflows/sandbox): a container per session behind the edge router.
  /** A sandbox no sync asked for in this long is stopped; the next sync brings it back. */
  SANDBOX_IDLE_S: z.coerce.number().int().min(1).default(1800),
  /** How long a (re)started preview app may take to answer HTTP before the sync reports it failed. */
  SANDBOX_READY_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(60),
  /** Bound of one dependency install (npm install, pip install -r requirements.txt) in a sandbox. */
  SANDBOX_INSTALL_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(300),
  /**
   * How long a sync request (and each follow-up read of it) waits for the sync to end before answering 202 with
   * where to follow it: a new container or an install takes longer than an HTTP client should hang.
   */
  SANDBOX_SYNC_WAIT_S: z.coerce.number().int().min(1).max(60).default(5),
};
