import net from 'node:net';
import path from 'node:path';

import { z } from 'zod';

import { bool, SOURCE_AND_BUILDER_SETTINGS } from './config-builds';
import { REGION_PATTERN, REGION_RULE } from './deployments/region-name';
import { checkUpstreamsDir } from './edge/routes';

/**
 * Every setting, read once from the environment. Defaults are the embedded local stack that
 * `npm start` runs; production points each part at a real service by its variable.
 */
const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * How many api processes share PORT on this machine (node:cluster; `auto` is one per core). One by default: the
   * api waits on its services far more than it computes, and on a small machine every process costs its own memory.
   */
  API_PROCESSES: z
    .union([z.literal('auto'), z.coerce.number().int().min(1).max(64)], {
      error: 'API_PROCESSES must be a whole number from 1 to 64, or auto (one per core)',
    })
    .default(1),
  /**
   * The routers in front of the api whose X-Forwarded-For names the client: comma-separated addresses, CIDRs or
   * `loopback`, `linklocal`, `uniquelocal` (private ranges). Unset, the peer is the client, so behind a router every
   * client would share the router's address, its budget of refused tokens and its audit entries.
   */
  TRUST_PROXY: z
    .string()
    .refine(
      (v) =>
        v.split(',').every((p) => {
          const item = p.trim();
          if (['loopback', 'linklocal', 'uniquelocal'].includes(item)) return true;
          const [ip, bits, ...rest] = item.split('/');
          const family = net.isIP(ip ?? '');
          if (!family || rest.length) return false;
          return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
        }),
      'TRUST_PROXY must be comma-separated addresses or CIDRs (10.0.0.0/8), or loopback, linklocal, uniquelocal',
    )
    .optional(),
  /** Address clients use to reach the api, for URLs the api prints (statusUrl). */
  PUBLIC_URL: z.url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  // Web console (docs/architecture.md, "Web console"): the static build of web/ the api serves at /.
  /** Where the built console is; empty turns the console off (then / answers a JSON 404 as any unknown path). */
  CONSOLE_DIR: z.string().default(path.resolve(__dirname, '..', 'web', 'dist')),
  /** How long a console session lives at most (never beyond the token it was opened with). */
  CONSOLE_SESSION_TTL_S: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86400)
    .default(12 * 3600),

  MONGODB_URL: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'a mongodb:// or mongodb+srv:// URL')
    .default('mongodb://127.0.0.1:27017/slipway'),
  MONGODB_DB: z.string().min(1).default('slipway'),

  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d+$/, 'host:port')
    .default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('slipway-deployments'),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_UI_URL: z.url().optional(),

  /**
   * Rate-limit counters and quotas: atomic where MongoDB-compatible stores are not (docs/architecture.md, "Decisions,
   * and why" and "Rate limits and quotas").
   */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL')
    .default('redis://127.0.0.1:6379'),

  S3_ENDPOINT: z.url().optional(),
  S3_BUCKET: z.string().min(3).default('slipway'),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),
  /**
   * Whether the object store is MinIO, whose admin API makes the keys that open one bucket only (shared/buckets).
   * `none` for another S3: buckets work, and their credential and link routes answer 501 saying keys are the
   * operator's to make (README, "Buckets").
   */
  S3_ADMIN: z.enum(['minio', 'none']).default('minio'),
  /** MinIO's client `mc`, which makes and removes those keys; `npm start` builds it and sets this. */
  MC_BINARY: z.string().min(1).optional(),
  /**
   * The object store's address as deployed apps reach it (a linked bucket's S3_ENDPOINT). Unset with the embedded
   * store on loopback: apps get the address of their network's gateway, which the worker's firewall forwards to the
   * store's port and nothing else (docs/architecture.md, "Buckets").
   */
  S3_APP_ENDPOINT: z.url().optional(),

  DOCKER_HOST: z
    .string()
    .regex(/^(unix|tcp|http|https):\/\//, 'unix:///path or tcp://host:port')
    .optional(),
  /** Host name put in a running deployment's `url` (where its published port answers). */
  ENGINE_PUBLIC_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * The region engine_local deployments run in: this server's place, as deploys and the organisation's defaultRegion
   * name it (shared/deployments/regions.ts). A DNS-label-like token.
   */
  ENGINE_REGION: z.string().regex(REGION_PATTERN, REGION_RULE).default('local'),
  /** Host address container ports are published on; 0.0.0.0 exposes deployments beyond this machine. */
  ENGINE_BIND_IP: z.union([z.ipv4(), z.ipv6()]).default('127.0.0.1'),
  /**
   * Image deploys naming a registry on a loopback/private/special address are refused unless this is set: the
   * engine daemon pulls from the host's own network (tests push to a registry on loopback).
   */
  ALLOW_PRIVATE_REGISTRIES: bool.default(false),
  /** Seconds a new container has to answer on its port before the deploy fails. */
  DEPLOY_READY_TIMEOUT_S: z.coerce.number().int().min(1).max(3600).default(60),

  // Deployment commands and releases (workflows/deployment, docs/architecture.md, "A deployment's lifecycle, as
  // workflows"); read by the api when it starts a deployment's workflow, which keeps them for its life.
  /** Releases whose images are kept from pruning: a rollback can go to any of them, with no registry or rebuild. */
  RELEASES_KEPT: z.coerce.number().int().min(1).max(100).default(10),
  /** Commands one workflow run carries out before it continues as new, so its history stays small. */
  DEPLOYMENT_COMMANDS_PER_RUN: z.coerce.number().int().min(1).max(1000).default(100),

  // Metrics history (GET /platform/deployments/{id}/container-metrics/history): the worker samples every running
  // instance on a schedule into deployment_metrics, and a sweep deletes samples past the retention (no TTL index on
  // the embedded store).
  METRICS_SAMPLE_S: z.coerce.number().int().min(1).max(3600).default(15),
  METRICS_RETENTION_H: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 90)
    .default(24),
  METRICS_SWEEP_S: z.coerce.number().int().min(1).default(600),
  /** Usage roll-up (docs/architecture.md, "Usage"): how often closed hours are rolled into usage records. */
  USAGE_ROLLUP_S: z.coerce.number().int().min(1).max(3600).default(300),

  // Edge router (docs/architecture.md, "Edge router", shared/edge): Caddy driven through its admin API; deployments'
  // stable URLs are http://<name>-<short id>.<EDGE_DOMAIN>:<EDGE_PORT>. `npm start` runs one unless EDGE_ADMIN_URL is
  // set.
  /** Caddy's admin API: loopback or a private network only, it reconfigures the router without credentials. */
  EDGE_ADMIN_URL: z.url().default('http://127.0.0.1:2019'),
  /** Domain under which each deployment gets its host; `localhost` needs no DNS (*.localhost is loopback). */
  EDGE_DOMAIN: z
    .string()
    .regex(/^(?=.{1,200}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'a lower-case domain name')
    .default('localhost'),
  /** Port the router listens on for deployments' traffic, and the one in their URLs. */
  EDGE_PORT: z.coerce.number().int().min(1).max(65535).default(8088),
  /** Address the router listens on; 0.0.0.0 serves deployments beyond this machine. */
  EDGE_BIND_IP: z.union([z.ipv4(), z.ipv6()]).default('127.0.0.1'),
  /** Host the router dials instances' published ports on, when it does not run on the engine's host (compose). */
  EDGE_UPSTREAM_HOST: z.string().min(1).optional(),
  /**
   * A directory the router reads too: each route reads its replicas' addresses from files here at every request, so a
   * redeploy, rollback, stop or start changes files and never reloads the router (a reload drops requests in flight).
   * `npm start` uses .data/caddy/upstreams. `off` (or empty) for a router that cannot see this machine's files: the
   * addresses are then in its config, and each of those changes is a reload.
   */
  EDGE_UPSTREAMS_DIR: z
    .string()
    .trim()
    .default(path.resolve('.data', 'caddy', 'upstreams'))
    .transform((v) => (v === '' || v === 'off' ? undefined : v))
    .superRefine((v, ctx) => {
      const error = v === undefined ? undefined : upstreamsDirError(v);
      if (error) ctx.addIssue({ code: 'custom', message: error });
    }),

  /**
   * Port of the router's TLS server, where verified custom domains are served with automatic certificates (0: none,
   * and domains can be verified but not routed). Production uses 443 (ACME's TLS-ALPN challenge needs it).
   */
  EDGE_TLS_PORT: z.coerce.number().int().min(0).max(65535).default(8443),
  /** Who issues custom domains' certificates: `acme` (Let's Encrypt and the like) or Caddy's own local CA. */
  EDGE_TLS_ISSUER: z.enum(['acme', 'internal']).default('internal'),
  /** The ACME account's contact address (optional). */
  ACME_EMAIL: z.email().optional(),
  /**
   * The router's public addresses, comma-separated: offered as A/AAAA records for a domain that cannot take a CNAME
   * (a zone's apex), and accepted as its routing. Empty: only the CNAME is offered.
   */
  EDGE_PUBLIC_IPS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.union([z.ipv4(), z.ipv6()]))),

  // Custom domains (api/features/domains, workflows/domain): ownership is a TXT record checked through these.
  /**
   * DNS servers the domain checks ask, comma-separated `host:port` (`[v6]:port`, port optional); the system's when
   * unset. Tests point it at a DNS server of their own.
   */
  DNS_RESOLVERS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.string().regex(/^(?:\[[0-9a-fA-F:.]+\]|[0-9.]+)(?::\d{1,5})?$/, 'an IP address with an optional :port'),
      ),
    ),
  /** How long one DNS question may take before the check says DNS did not answer. */
  DNS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3000),
  /** The verification workflow's first wait between checks; it doubles up to DOMAIN_CHECK_MAX_S. */
  DOMAIN_CHECK_FIRST_S: z.coerce.number().int().min(1).default(60),
  DOMAIN_CHECK_MAX_S: z.coerce.number().int().min(1).default(3600),
  /** How long a domain is checked in the background before it is marked failed (verify starts it again). */
  DOMAIN_CHECK_WINDOW_H: z.coerce
    .number()
    .min(0.001)
    .max(24 * 30)
    .default(72),

  // Cloud providers (activities/providers/cloud-*.ts). Where each SDK talks is the server's setting, never a tenant's:
  // empty means the cloud's public endpoint. Tests and private clouds point them elsewhere. AWS reads its own
  // AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> (SDK v3), and Azure's sign-in its own AZURE_AUTHORITY_HOST.
  /** Cloud Run Admin API v2 (`apiEndpoint` of @google-cloud/run), e.g. `https://run.googleapis.com`. */
  CLOUD_A_RUN_ENDPOINT: z.string().default(''),
  /** Cloud Logging API v2 (`apiEndpoint` of @google-cloud/logging). */
  CLOUD_A_LOGGING_ENDPOINT: z.string().default(''),
  /** Google's OAuth token endpoint the service account signs in at (`token_uri` of the key). */
  CLOUD_A_TOKEN_URL: z.string().default(''),
  /** Azure Resource Manager (`endpoint` of @azure/arm-appcontainers), e.g. `https://management.azure.com`. */
  CLOUD_B_ARM_ENDPOINT: z.string().default(''),
  /** Log Analytics query API (`endpoint` of @azure/monitor-query-logs), e.g. `https://api.loganalytics.io`. */
  CLOUD_B_LOGS_ENDPOINT: z.string().default(''),

  /**
   * Where the worker keeps persistent volumes on the engine's host: one preallocated ext4 image per volume, loop-mounted
   * beside it (activities/providers/engine-volumes.ts). The engine must see the same paths, so the worker runs on its
   * host. `npm start` uses .data/volumes.
   */
  VOLUMES_DIR: z
    .string()
    .trim()
    .default(path.resolve('.data', 'volumes'))
    .refine(
      (v) => path.isAbsolute(v) && path.normalize(v) === v && v !== '/',
      'an absolute path, without . or .. parts',
    ),

  /**
   * The images organisations' databases run (activities/providers/engine-databases.ts): Slipway's own, built on this
   * machine from scripts/images (`npm start` points these at their content-hash tags); a set value is used as is.
   */
  DATABASE_IMAGE_POSTGRESQL: z.string().min(1).default('slipway/postgres'),
  DATABASE_IMAGE_MARIADB: z.string().min(1).default('slipway/mariadb'),
  DATABASE_IMAGE_REDIS: z.string().min(1).default('slipway/redis'),

  // Rate limits (spec, "Limits"); raised only for benchmarks or by plan.
  RATE_LIMIT_COMPAT_WRITES_PER_HOUR: z.coerce.number().int().min(1).default(20),
  RATE_LIMIT_COMPAT_READS_PER_MIN: z.coerce.number().int().min(1).default(60),
  RATE_LIMIT_PLATFORM_PER_15MIN: z.coerce.number().int().min(1).default(100),
  /**
   * Platform requests whose token is missing or refused, per client address; the platform budget's size when unset.
   * Its own number for many clients behind one address, and for a fuzzing run whose every probe without a token
   * comes from loopback while its tokens keep the real budget.
   */
  RATE_LIMIT_PLATFORM_REFUSED_PER_15MIN: z.coerce.number().int().min(1).optional(),
  RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: z.coerce.number().int().min(1).default(10),
  /** Custom domain verifications (POST /platform/domains/{id}/verify, MCP verify_domain) per 5 minutes per user. */
  RATE_LIMIT_DOMAIN_VERIFY_PER_5MIN: z.coerce.number().int().min(1).default(3),
  /** MCP (/mcp and `slipway mcp`): calls per 5 minutes per token (the interface's default: 300). */
  RATE_LIMIT_MCP_PER_5MIN: z.coerce.number().int().min(1).default(300),
  /** Git webhook deliveries (/hooks) per client address per minute: a forge sends from a few addresses for many repos. */
  RATE_LIMIT_HOOKS_PER_MIN: z.coerce.number().int().min(1).default(120),
  /** Multiplies every plan's quotas: live deployments, volumes and their total size (benchmarks and fuzzers make more than a plan allows). */
  QUOTA_MULTIPLIER: z.coerce.number().int().min(1).default(1),
  /**
   * Rate limits and quotas in Redis (api/deployments/quota.ts). A quota slot taken for a deploy is a lease until its
   * workflow start is confirmed: a record whose workflow never started stops counting once the lease runs out.
   */
  QUOTA_LEASE_S: z.coerce.number().int().min(1).default(120),
  /** How often an organisation's quota slots are re-read from MongoDB, so a Redis that lost data converges. */
  QUOTA_RESYNC_S: z.coerce.number().int().min(1).default(300),
  /** Prefix of every Redis key: api processes of one installation share it; tests give each file its own. */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[\w.:-]*$/, 'letters, digits, "_", ".", ":" or "-"')
    .default('slipway:'),

  /** Delays between the first webhook attempts, seconds, then one last attempt this long after the first. */
  WEBHOOK_RETRY_DELAYS_S: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'comma-separated seconds, e.g. 60,300,1800')
    .default('60,300,1800')
    .transform((v) => v.split(',').map(Number)),
  WEBHOOK_FINAL_ATTEMPT_AFTER_S: z.coerce.number().int().min(1).default(86400),
  /** Tests deliver to receivers on loopback; production refuses private targets. */
  ALLOW_PRIVATE_WEBHOOK_TARGETS: bool.default(false),
  // Sales outbox (shared/contracts/webhook-delivery.ts): how often pending events are swept into delivery, and how long an api
  // request waits for a resend/test attempt before answering 202 (the attempt still runs when a worker comes).
  WEBHOOK_OUTBOX_SWEEP_S: z.coerce.number().int().min(1).default(60),
  /** How long a deployment command's request waits for its workflow to take it before answering 202 anyway. */
  DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * How long POST …/messages waits for its turn to end before answering 202 with where to follow it (the turn goes on):
   * a turn that outlasts a client's patience, or one no worker has taken yet, never holds a request open for good.
   */
  BUILDER_MESSAGE_WAIT_S: z.coerce.number().int().min(1).max(3600).default(600),
  // Database sources (docs/architecture.md, "Database sources"): external servers on loopback or private networks
  // are refused unless allowed (tests, private setups); metadata addresses always are.
  ALLOW_PRIVATE_DATABASE_SOURCES: bool.default(false),
  /** One statement's time limit, set on the server (statement_timeout, max_statement_time) for every query. */
  SOURCE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /** The most rows one answer carries, whatever maxRows asks; the rest is left unread and `truncated` says so. */
  SOURCE_QUERY_MAX_ROWS: z.coerce.number().int().min(1).max(100_000).default(1000),
  /** The most bytes of rows (as JSON) one answer carries. */
  SOURCE_QUERY_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** How long POST …/ask waits for its answer before answering 202 with where to read it (the answer goes on). */
  SOURCE_ASK_WAIT_S: z.coerce.number().int().min(1).max(3600).default(120),
  SALES_ATTEMPT_WAIT_MS: z.coerce.number().int().min(100).max(60_000).default(12_000),
  RATE_LIMIT_ENTITLEMENTS_PER_MIN: z.coerce.number().int().min(1).default(120),

  UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(100 * 1024 * 1024),
  UPLOAD_TTL_S: z.coerce
    .number()
    .int()
    .min(1)
    .default(24 * 3600),
  /** How often the upload-expiry schedule deletes expired archives and their records. */
  UPLOAD_EXPIRY_SWEEP_S: z.coerce.number().int().min(1).default(900),
  /** Where uploads are received before they go to S3, one directory per request, removed when it ends. */
  UPLOAD_TMP_DIR: z.string().min(1).optional(),

  /** 32 random bytes, base64 or hex: the AES-256-GCM key of vault secrets. `npm start` keeps one in .data/. */
  SECRETS_KEY: z
    .string()
    .refine((v) => secretsKeyBytes(v) !== undefined, '32 bytes as base64 or 64 hex characters')
    .optional(),

  /**
   * Reconciler (docs/architecture.md, "A deployment's lifecycle, as workflows"): the schedule removes engine objects of
   * destroyed or unknown deployments. Several Slipway instances may share one engine; each touches only objects
   * carrying its own instance label, by default derived from its database and task queue (shared/instance.ts). Objects
   * younger than the grace are left alone.
   */
  SLIPWAY_INSTANCE: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, 'letters, digits, dot, dash or underscore, at most 63')
    .optional(),
  RECONCILE_EVERY_S: z.coerce.number().int().min(1).default(300),
  RECONCILE_GRACE_S: z.coerce.number().int().min(0).default(300),

  ...SOURCE_AND_BUILDER_SETTINGS,

  /** How often an idle deployment event stream sends a comment line, so proxies and clients keep it open. */
  EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(10).max(60_000).default(15_000),
  /**
   * What may wait in one event stream's response for a client reading slower than the deployment writes; past it the
   * client is dropped (it resumes with Last-Event-ID) instead of the api buffering for it without bound.
   */
  EVENTS_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
});

function upstreamsDirError(dir: string): string | undefined {
  try {
    checkUpstreamsDir(dir);
    return undefined;
  } catch (err) {
    return `${(err as Error).message}, or off`;
  }
}

/** The key's bytes when `value` is 32 bytes in base64 or hex, else undefined. */
export function secretsKeyBytes(value: string): Buffer | undefined {
  const key = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  return key.length === 32 ? key : undefined;
}

export type Config = Readonly<z.infer<typeof schema>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `env`; a bad value throws one line naming the variable and what it expects. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = issue.path.join('.');
    throw new ConfigError(`invalid ${name}=${JSON.stringify(env[name] ?? '')}: ${issue.message}`);
  }
  return Object.freeze(result.data);
}

let loaded: Config | undefined;

/** The process's configuration, parsed on first use and frozen. */
export function config(): Config {
  loaded ??= parseConfig();
  return loaded;
}
