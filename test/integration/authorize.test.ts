import { randomUUID } from 'node:crypto';

import {
  isProjectOnly,
  isProjectPermission,
  ORG_ROLES,
  type OrgRole,
  type Permission,
  PERMISSIONS,
  PROJECT_ADMIN_ORG_ROLES,
  PROJECT_ROLES,
  type ProjectRole,
  projectRoleAllows,
  roleAllows,
} from '@shared/permissions';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Body = Record<string, unknown>;
type Api = ReturnType<typeof client>;
interface Member {
  userId: string;
  role: ProjectRole;
}
interface Call {
  method: string;
  path: string;
  body?: unknown;
}
/** What a case needs: the org owner's client (to make what a destructive probe spends) and the shared project. */
interface World {
  owner: Api;
  projectId: string;
  /** A fresh project; `member` joins it with that role (a destructive probe spends one per case). */
  newProject(member?: Member): Promise<string>;
  newDeployment(projectId?: string): Promise<string>;
  newVolume(projectId?: string): Promise<string>;
  newDatabase(projectId: string): Promise<string>;
  newBucket(projectId?: string): Promise<string>;
  newSource(projectId: string): Promise<string>;
  /** A Git binding of the project (a public repository by address: no DNS, no connection). */
  newBinding(projectId: string): Promise<string>;
  newDomain(projectId: string): Promise<string>;
}
/**
 * A real route that needs exactly `permission`, and the status it answers once access is granted (a refusal of the
 * body, a 404 of an unknown ID, or success): anything else is the access decision.
 */
interface Probe {
  call(w: World, inProject: boolean, member?: Member): Promise<Call>;
  granted: number;
  /** Other permissions the route needs too (a Git token through a deploy needs deployment.create). */
  also?: Permission[];
}

const unknownId = randomUUID();
/** One probe per permission, at org level (no project) and inside a project where the permission can be. */
const PROBES: Record<Permission, Probe> = {
  'deployment.read': {
    call: async (w, p) => ({
      method: 'GET',
      path: p ? `/compat/deployments/${await w.newDeployment(w.projectId)}` : '/compat/deployments',
    }),
    granted: 200,
  },
  'deployment.logs': {
    call: async (w, p) => ({
      method: 'GET',
      path: `/compat/deployments/${p ? await w.newDeployment(w.projectId) : unknownId}/logs`,
    }),
    granted: 0, // 200 inside the project, 404 for the unknown ID: see grantedOf
  },
  'deployment.create': {
    call: async (w, p) => ({
      method: 'POST',
      path: '/compat/deploy',
      body: { image: 42, ...(p ? { projectId: w.projectId } : {}) },
    }),
    granted: 400,
  },
  'deployment.manage': {
    call: async (w, p) => ({
      method: 'DELETE',
      path: `/compat/deployments/${p ? await w.newDeployment(w.projectId) : unknownId}`,
    }),
    granted: 0,
  },
  'project.read': {
    call: async (w, p) => ({ method: 'GET', path: p ? `/platform/projects/${w.projectId}` : '/platform/projects' }),
    granted: 200,
  },
  'project.create': { call: async () => ({ method: 'POST', path: '/platform/projects', body: {} }), granted: 400 },
  'project.update': {
    call: async (w) => ({ method: 'PUT', path: `/platform/projects/${w.projectId}`, body: { unknownField: 1 } }),
    granted: 400,
  },
  'project.delete': {
    call: async (w, _p, member) => ({ method: 'DELETE', path: `/platform/projects/${await w.newProject(member)}` }),
    granted: 204,
  },
  'project.members.manage': {
    call: async (w) => ({ method: 'POST', path: `/platform/projects/${w.projectId}/members`, body: {} }),
    granted: 400,
  },
  'token.manage': { call: async () => ({ method: 'GET', path: '/platform/tokens' }), granted: 200 },
  'sales.manage': { call: async () => ({ method: 'GET', path: '/platform/sales/deliveries' }), granted: 200 },
  'secret.manage': { call: async () => ({ method: 'GET', path: '/platform/secrets' }), granted: 200 },
  'secret.use': {
    call: async () => ({
      method: 'POST',
      path: '/compat/deploy/source',
      body: { name: 'git-app', repoUrl: 'https://git.example.com/a/b.git', gitTokenSecretId: unknownId },
    }),
    granted: 400,
    also: ['deployment.create'],
  },
  'user.manage': { call: async () => ({ method: 'GET', path: '/platform/users' }), granted: 200 },
  'audit.read': { call: async () => ({ method: 'GET', path: '/platform/audit' }), granted: 200 },
  'usage.read': { call: async () => ({ method: 'GET', path: '/platform/usage' }), granted: 200 },
  'ai_provider.manage': { call: async () => ({ method: 'GET', path: '/platform/ai-providers' }), granted: 200 },
  'volume.read': {
    call: async (w, p) => ({
      method: 'GET',
      path: p ? `/platform/volumes/${await w.newVolume(w.projectId)}` : '/platform/volumes',
    }),
    granted: 200,
  },
  'volume.create': {
    call: async (w, p) => ({
      method: 'POST',
      path: '/platform/volumes',
      body: { sizeGb: 'large', ...(p ? { projectId: w.projectId } : {}) },
    }),
    granted: 400,
  },
  'volume.delete': {
    call: async (w, p) => ({
      method: 'DELETE',
      path: `/platform/volumes/${p ? await w.newVolume(w.projectId) : unknownId}`,
    }),
    granted: 0, // 202 inside the project, 404 for the unknown ID: see grantedOf
  },
  'database.read': {
    call: async (w, p) => ({
      method: 'GET',
      path: p ? `/platform/databases/${await w.newDatabase(w.projectId)}` : '/platform/databases',
    }),
    granted: 200,
  },
  'database.create': {
    call: async (w, p) => ({
      method: 'POST',
      path: '/platform/databases',
      body: { engine: 'oracle', ...(p ? { projectId: w.projectId } : {}) },
    }),
    granted: 400,
  },
  'database.delete': {
    call: async (w, p) => ({
      method: 'DELETE',
      path: `/platform/databases/${p ? await w.newDatabase(w.projectId) : unknownId}`,
    }),
    granted: 0, // 202 inside the project, 404 for the unknown ID: see grantedOf
  },
  'database.backup': {
    call: async (w, p) => ({
      method: 'POST',
      path: `/platform/databases/${p ? await w.newDatabase(w.projectId) : unknownId}/backups`,
    }),
    granted: 0, // 409 inside the project (no worker: the database is still creating), 404 for the unknown ID
  },
  'database.restore': {
    call: async (w, p) => ({
      method: 'POST',
      path: `/platform/databases/${p ? await w.newDatabase(w.projectId) : unknownId}/backups/${unknownId}/restore`,
      body: {},
    }),
    granted: 404,
  },
  'database.reveal': {
    call: async (w) => ({ method: 'GET', path: `/platform/databases/${await w.newDatabase(w.projectId)}/connection` }),
    granted: 200,
  },
  'bucket.read': {
    call: async (w, p) => ({
      method: 'GET',
      path: p ? `/platform/buckets/${await w.newBucket(w.projectId)}` : '/platform/buckets',
    }),
    granted: 200,
  },
  'bucket.create': {
    call: async (w, p) => ({
      method: 'POST',
      path: '/platform/buckets',
      body: { name: 'Not_A_Bucket', ...(p ? { projectId: w.projectId } : {}) },
    }),
    granted: 400,
  },
  'bucket.delete': {
    call: async (w, p) => ({
      method: 'DELETE',
      path: `/platform/buckets/${p ? await w.newBucket(w.projectId) : unknownId}`,
    }),
    granted: 0, // 200 inside the project, 404 for the unknown ID: see grantedOf
  },
  'bucket.credentials': {
    call: async (w, p) => ({
      method: 'DELETE',
      path: `/platform/buckets/${p ? await w.newBucket(w.projectId) : unknownId}/credentials/SLWAAAAAAAAAAAAAAAAA`,
    }),
    granted: 404, // CREDENTIAL_NOT_FOUND inside the project, BUCKET_NOT_FOUND for the unknown ID
  },
  'database_source.read': {
    call: async (w, p) => ({
      method: 'GET',
      path: p ? `/platform/database-sources/${await w.newSource(w.projectId)}` : '/platform/database-sources',
    }),
    granted: 200,
  },
  'database_source.manage': {
    call: async (w, p) => ({
      method: 'POST',
      path: '/platform/database-sources',
      body: { engine: 'oracle', ...(p ? { projectId: w.projectId } : {}) },
    }),
    granted: 400,
  },
  'database_source.query': {
    call: async (w, p) => ({
      method: 'POST',
      path: `/platform/database-sources/${p ? await w.newSource(w.projectId) : unknownId}/query`,
      body: { sql: 'DELETE FROM accounts' },
    }),
    granted: 0, // 400 blocked by the safety check inside the project, 404 for the unknown ID
  },
  'ticket.read': { call: () => Promise.resolve({ method: 'GET', path: '/platform/tickets' }), granted: 200 },
  'ticket.create': {
    call: () => Promise.resolve({ method: 'POST', path: '/platform/tickets', body: { subject: 42 } }),
    granted: 400,
  },
  'organization.read': { call: () => Promise.resolve({ method: 'GET', path: '/platform/organization' }), granted: 200 },
  'organization.manage': {
    call: () => Promise.resolve({ method: 'PATCH', path: '/platform/organization', body: { unknownField: 1 } }),
    granted: 400,
  },
  'git.read': {
    call: async (w, p) => ({
      method: 'GET',
      path: p ? `/platform/git/bindings/${await w.newBinding(w.projectId)}/deliveries` : '/platform/git/bindings',
    }),
    granted: 200,
  },
  'git.manage': {
    call: async (w, p) => ({
      method: 'POST',
      path: '/platform/git/bindings',
      body: { repoUrl: 'ftp://8.8.8.8/x.git', branch: 'main', ...(p ? { projectId: w.projectId } : {}) },
    }),
    granted: 400,
  },
  'domain.read': {
    call: async (w, p) => ({
      method: 'GET',
      path: p ? `/platform/domains/${await w.newDomain(w.projectId)}` : '/platform/domains',
    }),
    granted: 200,
  },
  'domain.manage': {
    call: async (w, p) => ({
      method: 'POST',
      path: '/platform/domains',
      // A wildcard is refused (400) once access is granted; the deployment decides the project.
      body: { hostname: '*.example.com', deploymentId: p ? await w.newDeployment(w.projectId) : unknownId },
    }),
    granted: 400,
  },
};

const grantedOf = (permission: Permission, inProject: boolean) => {
  const g = PROBES[permission].granted;
  if (g !== 0) return g;
  if (permission === 'volume.delete' || permission === 'database.delete') return inProject ? 202 : 404;
  if (permission === 'database.backup') return inProject ? 409 : 404;
  if (permission === 'bucket.delete') return inProject ? 200 : 404;
  if (permission === 'database_source.query') return inProject ? 400 : 404;
  return permission === 'deployment.manage' ? (inProject ? 204 : 404) : inProject ? 200 : 404;
};

/**
 * The documented rule (the OpenAPI description, docs/architecture.md, "Identity and permissions"), from the table
 * alone: token scope, then org role, then — below org admin — the project role inside a project, a project one is not a
 * member of being 404.
 */
function expected(
  orgRole: OrgRole,
  projectRole: ProjectRole | undefined,
  p: Permission,
  inProject: boolean,
): 'granted' | 403 | 404 {
  if (!roleAllows(orgRole, p)) return 403;
  if (PROJECT_ADMIN_ORG_ROLES.includes(orgRole)) return 'granted';
  if (!inProject) return isProjectOnly(p) ? 403 : 'granted';
  if (!projectRole) return 404;
  return projectRoleAllows(projectRole, p) ? 'granted' : 403;
}

/** Project-only permissions always name a project; the others are probed both outside and inside one. */
const placements = (p: Permission): boolean[] =>
  isProjectOnly(p) ? [true] : isProjectPermission(p) ? [false, true] : [false];

describe('authorize: the permission table and the behaviour agree, route by route', () => {
  let h: Harness;
  let w: World;
  let orgId: string;
  let ownerId: string;
  const users = new Map<string, { api: Api; userId: string }>();

  /** A user of `orgRole` (member of the shared project as `projectRole`), with a token naming every scope. */
  async function userFor(orgRole: OrgRole, projectRole?: ProjectRole): Promise<Api> {
    return (await memberFor(orgRole, projectRole)).api;
  }
  async function memberFor(orgRole: OrgRole, projectRole?: ProjectRole) {
    const key = `${orgRole}/${projectRole ?? '-'}`;
    const known = users.get(key);
    if (known) return known;
    const user = await h.identity.addUser({
      orgId,
      email: `${key.replace('/', '.')}-${randomUUID()}@example.com`,
      role: orgRole,
    });
    if (projectRole) {
      const r = await w.owner.post(`/platform/projects/${w.projectId}/members`, {
        userId: user._id,
        role: projectRole,
      });
      expect([key, r.status]).toEqual([key, 200]);
    }
    const t = await h.identity.createToken({ orgId, userId: user._id, name: key, scopes: [...PERMISSIONS] });
    const made = { api: client(h, t.token), userId: user._id };
    users.set(key, made);
    return made;
  }

  beforeAll(async () => {
    h = await startHarness(
      'authorize',
      {
        RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
        // No worker runs: a volume's delete is answered after this wait.
        DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS: '500',
      },
      { worker: false },
    );
    const org = await h.newOrg('enterprise');
    orgId = org.orgId;
    ownerId = org.userId;
    const owner = client(h, org.token);
    const newProject = async (member?: Member) => {
      const r = await owner.post<{ data: { id: string } }>('/platform/projects', { name: `p-${randomUUID()}` });
      if (r.status !== 200) throw new Error(`creating a project answered ${r.status}: ${JSON.stringify(r.body)}`);
      if (member) {
        const m = await owner.post(`/platform/projects/${r.body.data.id}/members`, member);
        if (m.status !== 200) throw new Error(`adding a member answered ${m.status}: ${JSON.stringify(m.body)}`);
      }
      return r.body.data.id;
    };
    const newDeployment = async (projectId?: string) => {
      const r = await owner.post<Body>('/compat/deploy', {
        image: 'slipway-test/none:1',
        name: `d-${randomUUID().slice(0, 8)}`,
        ...(projectId ? { projectId } : {}),
      });
      if (r.status !== 202) throw new Error(`deploying answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.deploymentId as string;
    };
    const newVolume = async (projectId?: string) => {
      const r = await owner.post<{ data: { id: string } }>('/platform/volumes', {
        name: `v-${randomUUID().slice(0, 8)}`,
        sizeGb: 1,
        ...(projectId ? { projectId } : {}),
      });
      if (r.status !== 201) throw new Error(`creating a volume answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data.id;
    };
    const newDatabase = async (projectId: string) => {
      const r = await owner.post<{ data: { id: string } }>('/platform/databases', {
        projectId,
        engine: 'redis',
        name: `db-${randomUUID().slice(0, 8)}`,
        sizeGb: 1,
      });
      if (r.status !== 201) throw new Error(`creating a database answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data.id;
    };
    const newBucket = async (projectId?: string) => {
      const r = await owner.post<{ data: { id: string } }>('/platform/buckets', {
        name: `b-${randomUUID().slice(0, 8)}`,
        ...(projectId ? { projectId } : {}),
      });
      if (r.status !== 201) throw new Error(`creating a bucket answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data.id;
    };
    // A public address: created without connecting, which no probe needs.
    const newSource = async (projectId: string) => {
      const r = await owner.post<{ data: { id: string } }>('/platform/database-sources', {
        projectId,
        name: `s-${randomUUID().slice(0, 8)}`,
        engine: 'postgres',
        host: '8.8.8.8',
        port: 5432,
        database: 'x',
        user: 'x',
        password: 'x',
      });
      if (r.status !== 201) throw new Error(`creating a source answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data.id;
    };
    const newBinding = async (projectId: string) => {
      const r = await owner.post<{ data: { id: string } }>('/platform/git/bindings', {
        projectId,
        repoUrl: 'https://8.8.8.8/acme/app.git',
        branch: 'main',
      });
      if (r.status !== 201) throw new Error(`creating a Git binding answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data.id;
    };
    const newDomain = async (projectId: string) => {
      const r = await owner.post<{ data: { id: string } }>('/platform/domains', {
        hostname: `www.d-${randomUUID().slice(0, 8)}.example.com`,
        deploymentId: await newDeployment(projectId),
      });
      if (r.status !== 201) throw new Error(`adding a domain answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data.id;
    };
    w = {
      owner,
      projectId: await newProject(),
      newProject,
      newDomain,
      newDeployment,
      newVolume,
      newDatabase,
      newBucket,
      newSource,
      newBinding,
    };
  });
  afterAll(() => h?.stop());

  const orgCases = ORG_ROLES.flatMap((role) =>
    PERMISSIONS.flatMap((p) => placements(p).map((inProject) => [role, p, inProject] as const)),
  );
  it.each(orgCases)('org %s, %s (in a project: %s), not a member of it', async (role, p, inProject) => {
    const api = await userFor(role);
    const call = await PROBES[p].call(w, inProject);
    const r = await api.call(call.method, call.path, call.body);
    const want = [p, ...(PROBES[p].also ?? [])].map((q) => expected(role, undefined, q, inProject));
    const refusal = want.find((x) => x !== 'granted');
    expect([call.method, call.path, r.status]).toEqual([call.method, call.path, refusal ?? grantedOf(p, inProject)]);
  });

  const projectCases = (['developer', 'viewer'] as const).flatMap((orgRole) =>
    PROJECT_ROLES.flatMap((role) => PERMISSIONS.filter(isProjectPermission).map((p) => [orgRole, role, p] as const)),
  );
  it.each(projectCases)('org %s who is project %s, %s in that project', async (orgRole, role, p) => {
    const { api, userId } = await memberFor(orgRole, role);
    const call = await PROBES[p].call(w, true, { userId, role });
    const r = await api.call(call.method, call.path, call.body);
    const result = expected(orgRole, role, p, true);
    expect([call.method, call.path, r.status]).toEqual([
      call.method,
      call.path,
      result === 'granted' ? grantedOf(p, true) : result,
    ]);
    if (result === 403)
      expect((r.body as { message: string }).message ?? (r.body as { error: string }).error).toMatch(p);
  });

  it('opens the organisation-wide status stream for every role with deployment.read, and for no token without it', async () => {
    /** The stream's status: a granted one stays open, so only its head is read. */
    const streamStatus = async (token: string) => {
      const abort = new AbortController();
      const r = await fetch(`${h.baseUrl}/platform/deployment-events`, {
        headers: { authorization: `Bearer ${token}` },
        signal: abort.signal,
      });
      abort.abort();
      return r.status;
    };
    for (const role of ORG_ROLES) {
      const user = await h.identity.addUser({ orgId, email: `stream-${role}-${randomUUID()}@example.com`, role });
      const full = await h.identity.createToken({ orgId, userId: user._id, name: 's', scopes: [...PERMISSIONS] });
      const want = roleAllows(role, 'deployment.read') ? 200 : 403;
      expect([role, await streamStatus(full.token)]).toEqual([role, want]);
      const scopes = PERMISSIONS.filter((q) => q !== 'deployment.read');
      const without = await h.identity.createToken({ orgId, userId: user._id, name: 's-', scopes });
      expect([role, await streamStatus(without.token)]).toEqual([role, 403]);
    }
  });

  it('refuses every permission to a token without its scope, even the owner’s, with 403 naming the scope', async () => {
    for (const p of PERMISSIONS) {
      const t = await h.identity.createToken({
        orgId,
        userId: ownerId,
        name: `no-${p}`,
        scopes: PERMISSIONS.filter((q) => q !== p),
      });
      const call = await PROBES[p].call(w, isProjectOnly(p));
      const r = await client(h, t.token).call(call.method, call.path, call.body);
      expect([p, r.status]).toEqual([p, 403]);
      expect([p, JSON.stringify(r.body)]).toEqual([p, expect.stringContaining(p)]);
    }
  });

  it('hides a project and its deployments from a developer who is not a member: 404 on each, absent from lists', async () => {
    const outsider = await userFor('developer');
    const deploymentId = await w.newDeployment(w.projectId);
    const own = await w.newDeployment();
    for (const path of [
      `/platform/projects/${w.projectId}`,
      `/platform/projects/${w.projectId}/members`,
      `/compat/deployments/${deploymentId}`,
      `/compat/deployments/${deploymentId}/logs`,
    ]) {
      const r = await outsider.get(path);
      expect([path, r.status]).toEqual([path, 404]);
      expect([path, JSON.stringify(r.body)]).not.toEqual([path, expect.stringMatching(/member|permission|role/i)]);
    }
    // The same answer as for an ID that exists nowhere.
    const ghost = await outsider.get(`/compat/deployments/${randomUUID()}`);
    const hidden = await outsider.get(`/compat/deployments/${deploymentId}`);
    expect(hidden.body).toEqual({ ...ghost.body, error: expect.any(String), details: expect.any(Object) });
    expect((hidden.body as { code: string }).code).toBe('DEPLOYMENT_NOT_FOUND');
    expect((await outsider.del(`/compat/deployments/${deploymentId}`)).status).toBe(404);
    // A deploy into it is refused as if it did not exist.
    const into = await outsider.post<Body>('/compat/deploy', {
      image: 'slipway-test/none:1',
      name: 'x',
      projectId: w.projectId,
    });
    expect([into.status, into.body.code]).toEqual([404, 'PROJECT_NOT_FOUND']);

    const projects = await outsider.get<{ data: { projects?: { id: string }[] } | { id: string }[] }>(
      '/platform/projects',
    );
    expect(projects.status).toBe(200);
    expect(JSON.stringify(projects.body)).not.toContain(w.projectId);
    const list = await outsider.get<{ deployments: { id: string }[] }>('/compat/deployments?limit=100');
    const ids = list.body.deployments.map((d) => d.id);
    expect(ids).toContain(own);
    expect(ids).not.toContain(deploymentId);
    // A member sees both.
    const member = await userFor('developer', 'viewer');
    const seen = (await member.get<{ deployments: { id: string }[] }>('/compat/deployments?limit=100')).body
      .deployments;
    expect(seen.map((d) => d.id)).toEqual(expect.arrayContaining([own, deploymentId]));
  });

  it('publishes the same table in the OpenAPI description, row by row', async () => {
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as { info: { description: string } };
    for (const p of PERMISSIONS) {
      const row = doc.info.description.split('\n').find((l) => l.startsWith(`| \`${p}\` |`));
      const cells = row
        ?.split('|')
        .slice(2, -1)
        .map((c) => c.trim());
      const org = ORG_ROLES.map((r) =>
        !roleAllows(r, p) ? '–' : isProjectOnly(p) && !PROJECT_ADMIN_ORG_ROLES.includes(r) ? 'in projects' : '✓',
      );
      const project = PROJECT_ROLES.map((r) =>
        isProjectPermission(p) ? (projectRoleAllows(r, p) ? '✓' : '–') : 'n/a',
      );
      expect([p, cells]).toEqual([p, [...org, ...project]]);
    }
  });

  it('answers 404 across organisations for a project and its members, whatever the caller’s role there', async () => {
    const other = client(h, (await h.newOrg('enterprise')).token);
    for (const [method, path, body] of [
      ['GET', `/platform/projects/${w.projectId}`, undefined],
      ['PUT', `/platform/projects/${w.projectId}`, { description: 'x' }],
      ['DELETE', `/platform/projects/${w.projectId}`, undefined],
      ['GET', `/platform/projects/${w.projectId}/members`, undefined],
      ['POST', `/platform/projects/${w.projectId}/members`, { userId: randomUUID(), role: 'admin' }],
    ] as const) {
      const r = await other.call(method, path, body);
      expect([method, path, r.status]).toEqual([method, path, 404]);
    }
  });
});
