import { type Command, InvalidArgumentError, Option } from 'commander';

import { config } from '@shared/config';
import { connectMongo } from '@shared/db/mongo';
import { announceIdentityChange, CACHED_PRINCIPAL_MAX_AGE_MS } from '@shared/identity/principal-cache';
import { createIdentityService } from '@shared/identity/service';
import { createIdentityStore, PLANS } from '@shared/identity/store';
import { ORG_ROLES, type Permission, PERMISSIONS } from '@shared/permissions';
import { createRedis } from '@shared/redis';

/** "90d", "12h", "30m", "45s" → seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)([smhd])$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('expected a duration such as 30m, 12h or 90d');
  return Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as 's' | 'm' | 'h' | 'd'];
}

function parseScopes(value: string): Permission[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(PERMISSIONS as readonly string[]).includes(s));
  if (unknown.length)
    throw new InvalidArgumentError(`unknown scope(s) ${unknown.join(', ')}; known: ${PERMISSIONS.join(', ')}`);
  return scopes as Permission[];
}

/**
 * Tells the running api processes, which keep principals in memory, that one changed (a revoked token). Redis is
 * opened only for such a change, so commands that change no principal run without it.
 */
async function announce(cfg: ReturnType<typeof config>): Promise<void> {
  const redis = createRedis(cfg.REDIS_URL);
  try {
    await announceIdentityChange(redis, cfg.REDIS_KEY_PREFIX);
  } catch (err) {
    throw new Error(
      `the change is stored, but the api processes could not be told through Redis (${err instanceof Error ? err.message : String(err)}); they may honour the old state for up to ${CACHED_PRINCIPAL_MAX_AGE_MS / 1000} s. Run the command again once Redis answers.`,
    );
  } finally {
    redis.disconnect();
  }
}

/** Opens MongoDB for one command and closes it after, so the CLI exits on its own. */
async function withIdentity<T>(fn: (identity: ReturnType<typeof createIdentityService>) => Promise<T>): Promise<T> {
  const cfg = config();
  const database = await connectMongo(cfg.MONGODB_URL, cfg.MONGODB_DB);
  try {
    const store = createIdentityStore(database.db);
    await store.ensureIndexes();
    return await fn(createIdentityService({ store, announce: () => announce(cfg) }));
  } finally {
    await database.close();
  }
}

function print(json: boolean, value: Record<string, unknown>, text: string) {
  console.log(json ? JSON.stringify(value) : text);
}

/** Operator commands: they open the server's MongoDB directly (its config from the environment), no API. */
export function registerAdmin(program: Command): void {
  const admin = program.command('admin').description('organisations, users and access tokens');

  admin
    .command('bootstrap')
    .description('create an organisation, its owner and an owner token with every scope')
    .requiredOption('--org <name>', 'organisation name')
    .addOption(new Option('--plan <plan>', 'plan').choices(PLANS).default('free'))
    .option('--email <email>', "owner's e-mail")
    .option('--expires-in <duration>', 'token lifetime, e.g. 90d', parseDuration)
    .option('--json', 'print JSON')
    .action(
      async (o: { org: string; plan: (typeof PLANS)[number]; email?: string; expiresIn?: number; json?: boolean }) => {
        const r = await withIdentity((id) =>
          id.bootstrap({ orgName: o.org, plan: o.plan, ownerEmail: o.email, expiresInS: o.expiresIn }),
        );
        const out = { orgId: r.orgId, userId: r.userId, token: r.token, expiresAt: r.expiresAt.toISOString() };
        print(
          !!o.json,
          out,
          `org ${r.orgId}\nuser ${r.userId}\ntoken ${r.token} (shown once; expires ${out.expiresAt})`,
        );
      },
    );

  admin
    .command('user')
    .description('users of an organisation')
    .command('add')
    .requiredOption('--org <id>', 'organisation ID')
    .requiredOption('--email <email>', 'e-mail')
    .addOption(new Option('--role <role>', 'org role').choices(ORG_ROLES).makeOptionMandatory())
    .option('--json', 'print JSON')
    .action(async (o: { org: string; email: string; role: (typeof ORG_ROLES)[number]; json?: boolean }) => {
      const user = await withIdentity(async (id) => {
        if (!(await id.orgExists(o.org))) throw new InvalidArgumentError(`no organisation ${o.org}`);
        return id.addUser({ orgId: o.org, email: o.email, role: o.role });
      });
      print(!!o.json, { userId: user._id }, `user ${user._id}`);
    });

  const token = admin.command('token').description('access tokens');
  token
    .command('create')
    .requiredOption('--org <id>', 'organisation ID')
    .requiredOption('--user <id>', 'user ID')
    .requiredOption('--scopes <list>', `comma-separated scopes (${PERMISSIONS.join(', ')})`, parseScopes)
    .option('--expires-in <duration>', 'lifetime, e.g. 1h or 30d', parseDuration, 90 * 86400)
    .option('--name <name>', 'a name to recognise it by', 'cli')
    .option('--json', 'print JSON')
    .action(
      async (o: {
        org: string;
        user: string;
        scopes: Permission[];
        expiresIn: number;
        name: string;
        json?: boolean;
      }) => {
        const t = await withIdentity(async (id) => {
          if (!(await id.userExists(o.org, o.user)))
            throw new InvalidArgumentError(`no user ${o.user} in organisation ${o.org}`);
          return id.createToken({
            orgId: o.org,
            userId: o.user,
            name: o.name,
            scopes: o.scopes,
            expiresInS: o.expiresIn,
          });
        });
        const out = { id: t.id, token: t.token, expiresAt: t.expiresAt.toISOString() };
        print(!!o.json, out, `token ${t.token} (id ${t.id}; shown once; expires ${out.expiresAt})`);
      },
    );
  token
    .command('revoke')
    .requiredOption('--id <id>', 'token ID')
    .option('--json', 'print JSON')
    .action(async (o: { id: string; json?: boolean }) => {
      const revoked = await withIdentity((id) => id.revokeToken(o.id));
      if (!revoked) throw new InvalidArgumentError(`no active token ${o.id}`);
      print(!!o.json, { id: o.id, revoked: true }, `revoked ${o.id}`);
    });
}
