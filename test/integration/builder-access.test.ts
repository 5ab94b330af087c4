import { createHash, randomUUID } from 'node:crypto';

import { WorkflowNotFoundError } from '@temporalio/client';

import { createBlobStore } from '@shared/builder/files';
import { SANDBOX_SESSION_LABEL } from '@shared/builder/sandbox-store';
import { sandboxWorkflowId } from '@shared/contracts/sandbox';
import { createProjectStore } from '@shared/projects/store';

import { type ProviderDouble, startOpenAiDouble } from '../helpers/ai-doubles';
import { client } from '../helpers/client';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { type Harness, startHarness } from '../helpers/harness';

type Api = ReturnType<typeof client>;
type Data<T> = { data: T; message?: string };

/** What a route names: the real resources of the org, or IDs of the same shapes that name nothing. */
interface Ids {
  project: string;
  session: string;
  checkpoint: string;
  provider: string;
  slug: string;
  /** Git repositories on the recording server: one to import, one to push to. */
  source: string;
  target: string;
}

/** A route's request for the given IDs; `write`: it changes something (a project viewer may still read). */
interface Call {
  what: string;
  method: string;
  path: (ids: Ids) => string;
  body?: (ids: Ids) => unknown;
  write: boolean;
}

// Bytes no test saves: if a refused save stored them anyway, their digest would be in S3.
const STOLEN = `stolen-${randomUUID()}`;

/**
 * Every builder route, called by someone without the role for it: an org viewer (a developer in the project, yet
 * read-only), an org viewer and an org developer who are not members of the project, and another organisation.
 * Each is refused — 403 where the caller can see the project, 404 where it cannot — before any work: no session,
 * file, checkpoint, share, message or sandbox is written, no container or workflow started, no Git server called,
 * no model asked. And a caller who cannot see the project gets the same answer for it as for an ID that names
 * nothing, so it cannot learn which projects exist.
 */
describe('builder routes refuse a caller without the role before doing anything', () => {
  let h: Harness;
  let git: GitServer;
  let model: ProviderDouble;

  beforeAll(async () => {
    h = await startHarness('builder-access', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      ALLOW_PRIVATE_GIT_HOSTS: 'true',
      ALLOW_PRIVATE_AI_PROVIDERS: 'true',
    });
    git = await startGitServer();
    model = await startOpenAiDouble({ models: ['gpt-4o-mini'] });
  });
  afterAll(async () => {
    await model?.close();
    await git?.stop();
    await h?.stop();
  });

  const CALLS: Call[] = [
    { what: 'create a session', method: 'POST', path: () => '/platform/builder/sessions', write: true },
    {
      what: "get or make the project's session",
      method: 'POST',
      path: (i) => `/platform/builder/projects/${i.project}/session`,
      body: () => ({}),
      write: true,
    },
    { what: 'read a session', method: 'GET', path: (i) => `/platform/builder/sessions/${i.session}`, write: false },
    {
      what: 'save files',
      method: 'PUT',
      path: (i) => `/platform/builder/sessions/${i.session}/files`,
      body: () => ({ files: [{ path: 'stolen.txt', content: STOLEN }] }),
      write: true,
    },
    {
      what: 'revert',
      method: 'POST',
      path: (i) => `/platform/builder/sessions/${i.session}/revert`,
      body: (i) => ({ checkpointId: i.checkpoint }),
      write: true,
    },
    {
      what: 'set the model',
      method: 'PUT',
      path: (i) => `/platform/builder/sessions/${i.session}/model`,
      body: () => ({ model: 'gpt-4o-mini' }),
      write: true,
    },
    {
      what: 'set the provider',
      method: 'PUT',
      path: (i) => `/platform/builder/sessions/${i.session}/provider`,
      body: (i) => ({ providerId: i.provider }),
      write: true,
    },
    {
      what: 'share',
      method: 'POST',
      path: (i) => `/platform/builder/sessions/${i.session}/share`,
      body: () => ({ access: 'remix' }),
      write: true,
    },
    { what: 'revoke a share', method: 'DELETE', path: (i) => `/platform/builder/shares/${i.slug}`, write: true },
    {
      what: 'remix a share into the project',
      method: 'POST',
      path: (i) => `/platform/builder/shares/${i.slug}/remix`,
      body: (i) => ({ projectId: i.project }),
      write: true,
    },
    {
      what: 'send a message',
      method: 'POST',
      path: (i) => `/platform/builder/sessions/${i.session}/messages`,
      body: () => ({ content: 'Write the page' }),
      write: true,
    },
    {
      what: 'stream a message',
      method: 'POST',
      path: (i) => `/platform/builder/sessions/${i.session}/messages/stream`,
      body: () => ({ content: 'Write the page' }),
      write: true,
    },
    {
      what: "read a turn's events",
      method: 'GET',
      path: (i) => `/platform/builder/sessions/${i.session}/turns/${i.checkpoint}/events`,
      write: false,
    },
    {
      what: 'configure the sandbox',
      method: 'PUT',
      path: (i) => `/platform/builder/sessions/${i.session}/sandbox`,
      body: () => ({ runtime: 'node' }),
      write: true,
    },
    {
      what: 'sync the sandbox',
      method: 'POST',
      path: (i) => `/platform/builder/sessions/${i.session}/sandbox/sync`,
      body: () => ({}),
      write: true,
    },
    {
      what: 'follow a sandbox sync',
      method: 'GET',
      path: (i) => `/platform/builder/sessions/${i.session}/sandbox/syncs/${i.checkpoint}`,
      write: false,
    },
    {
      what: 'read the Git binding',
      method: 'GET',
      path: (i) => `/platform/builder/sessions/${i.session}/git`,
      write: false,
    },
    {
      what: 'push to Git',
      method: 'POST',
      path: (i) => `/platform/builder/sessions/${i.session}/git/push`,
      body: (i) => ({ remoteUrl: i.target, branch: 'main', message: 'pushed by someone else' }),
      write: true,
    },
    {
      what: 'import from Git into the project',
      method: 'POST',
      path: () => '/platform/builder/import/git',
      body: (i) => ({ repoUrl: i.source, projectId: i.project }),
      write: true,
    },
    {
      // Were the clone tried first, its failure (400) would tell an existing project from an unknown one (404).
      what: 'import a repository that does not exist',
      method: 'POST',
      path: () => '/platform/builder/import/git',
      body: (i) => ({ repoUrl: i.source.replace('/source-', '/missing-'), projectId: i.project }),
      write: true,
    },
  ];
  // The first call's body names the project too.
  CALLS[0]!.body = (i) => ({ projectId: i.project });

  /** An org with a project holding a session (provider, files, a remix share, a sandbox configured), and its callers. */
  async function setup() {
    const o = await h.newOrg();
    const projects = createProjectStore(h.db);
    const project = randomUUID();
    const now = new Date();
    await projects.insert({
      _id: project,
      orgId: o.orgId,
      name: 'p',
      createdAt: now,
      updatedAt: now,
      createdBy: o.userId,
    });
    const owner = client(h, o.token);
    const provider = (
      await owner.post<Data<{ id: string }>>('/platform/ai-providers', {
        name: 'double',
        kind: 'openai_compatible',
        baseUrl: model.baseUrl,
        apiKey: model.apiKey,
        defaultModel: 'gpt-4o-mini',
      })
    ).body.data.id;
    const session = (
      await owner.post<Data<{ id: string }>>('/platform/builder/sessions', { projectId: project, providerId: provider })
    ).body.data.id;
    const saved = await owner.call<Data<{ checkpoint: { id: string } }>>(
      'PUT',
      `/platform/builder/sessions/${session}/files`,
      { files: [{ path: 'index.html', content: 'mine' }] },
    );
    const slug = (
      await owner.post<Data<{ slug: string }>>(`/platform/builder/sessions/${session}/share`, { access: 'remix' })
    ).body.data.slug;
    expect(
      (await owner.call('PUT', `/platform/builder/sessions/${session}/sandbox`, { runtime: 'static' })).status,
    ).toBe(200);
    const tag = randomUUID().slice(0, 8);
    const source = await git.addRepo(`acme/source-${tag}`, { 'index.html': 'theirs' });
    const target = await git.addRepo(`acme/target-${tag}`, { 'README.md': 'target' });

    const user = async (orgRole: 'developer' | 'viewer', projectRole?: 'developer') => {
      const u = await h.identity.addUser({ orgId: o.orgId, email: `${randomUUID()}@x.invalid`, role: orgRole });
      if (projectRole)
        await projects.addMember({
          projectId: project,
          orgId: o.orgId,
          userId: u._id,
          role: projectRole,
          addedAt: now,
          addedBy: o.userId,
        });
      return client(h, (await h.identity.createToken({ orgId: o.orgId, userId: u._id, name: 't', scopes: [] })).token);
    };
    const ids: Ids = { project, session, checkpoint: saved.body.data.checkpoint.id, provider, slug, source, target };
    return {
      orgId: o.orgId,
      ids,
      callers: {
        'an org viewer who is a developer in the project': { api: await user('viewer', 'developer'), sees: true },
        'an org viewer outside the project': { api: await user('viewer'), sees: false },
        'an org developer outside the project': { api: await user('developer'), sees: false },
        'another organisation': { api: client(h, (await h.newOrg()).token), sees: false },
      },
    };
  }

  /** Everything a builder route could have written for the org, and what it could have started. */
  async function state(orgId: string, ids: Ids) {
    const of = (name: string) => h.db.collection(name).find({ orgId }).sort({ _id: 1 }).toArray();
    const blobs = createBlobStore({ s3: h.s3, bucket: h.config.S3_BUCKET });
    const sandboxWorkflow = await h.temporal.workflow
      .getHandle(sandboxWorkflowId(ids.session))
      .describe()
      .then(
        () => 'started',
        (err: unknown) => (err instanceof WorkflowNotFoundError ? 'none' : String(err)),
      );
    return {
      sessions: await of('builder_sessions'),
      checkpoints: await of('builder_checkpoints'),
      messages: await of('builder_messages'),
      events: await of('builder_turn_events'),
      turns: await of('builder_running_turns'),
      shares: await of('builder_shares'),
      sandboxes: await of('builder_sandboxes'),
      gitBindings: await of('builder_git'),
      stolenBlob: await blobs.exists(orgId, createHash('sha256').update(STOLEN).digest('hex')),
      sandboxContainers: (
        await h.docker.listContainers({ all: true, filters: { label: [`${SANDBOX_SESSION_LABEL}=${ids.session}`] } })
      ).length,
      sandboxWorkflow,
      gitRequests: git.requests.length,
      modelRequests: model.requests.length,
    };
  }

  const send = (api: Api, call: Call, ids: Ids) =>
    api.call<{ status: string; message: string }>(call.method, call.path(ids), call.body?.(ids));

  it('refuses each builder route with 403 or 404, and nothing is written, started or called', async () => {
    const { orgId, ids, callers } = await setup();
    const before = await state(orgId, ids);
    expect(before).toMatchObject({ stolenBlob: false, sandboxContainers: 0, sandboxWorkflow: 'none', gitRequests: 0 });

    for (const [who, { api, sees }] of Object.entries(callers)) {
      for (const call of CALLS) {
        if (sees && !call.write) continue;
        const r = await send(api, call, ids);
        // Within the org and able to see the project: a plain 403 saying which role is missing. Otherwise: the
        // same not-found an unknown ID gets.
        expect([who, call.what, r.status]).toEqual([who, call.what, sees ? 403 : 404]);
        expect(r.body).toEqual({ status: 'error', message: expect.any(String) });
      }
    }
    expect(await state(orgId, ids)).toEqual(before);
  });

  it('answers a caller who cannot see the project the same for it as for an ID that names nothing', async () => {
    const { ids, callers } = await setup();
    // The project and its session replaced by IDs that name nothing; the rest (a share's slug, which any member of
    // the org may read anyway) stays, so each answer differs from its twin in the project alone.
    const ghost: Ids = { ...ids, project: randomUUID(), session: randomUUID() };
    const blind = (text: string, named: Ids) =>
      [named.project, named.session].reduce((t, id) => t.split(id).join('<id>'), text);
    for (const [who, { api, sees }] of Object.entries(callers)) {
      if (sees) continue;
      for (const call of CALLS) {
        const real = await send(api, call, ids);
        const none = await send(api, call, ghost);
        expect([who, call.what, real.status, blind(JSON.stringify(real.body), ids)]).toEqual([
          who,
          call.what,
          none.status,
          blind(JSON.stringify(none.body), ghost),
        ]);
      }
    }
  });
});
