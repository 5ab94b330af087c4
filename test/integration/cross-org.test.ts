import { randomUUID } from 'node:crypto';

import { createCloudCredentialStore } from '@shared/cloud/store';
import { createProjectStore } from '@shared/projects/store';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { archiveForm, makeZip } from '../helpers/zip';

type Body = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { requestBody?: unknown }>>;
}

/**
 * Org B, holding an owner token with every scope, against everything org A owns. The routes come from the OpenAPI
 * document, which is generated from the route tables (compatRoutes, platformRoutes): a new route is swept as soon
 * as it exists, and one whose path names a resource this test does not create fails the sweep until it does.
 */
describe('cross-organisation sweep: no route of either origin lets one organisation reach another’s resources', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(
      'cross-org',
      {
        RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
        ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        ALLOW_PRIVATE_AI_PROVIDERS: 'true',
      },
      { worker: false },
    );
  });
  afterAll(() => h?.stop());

  it('answers every ID-addressed route with a refusal that reveals nothing, and lists none of A’s resources', async () => {
    const orgA = await h.newOrg('enterprise');
    const a = client(h, orgA.token);
    const orgB = await h.newOrg('enterprise');
    const b = client(h, orgB.token);
    const ok = <T extends Body>(r: { status: number; body: T }, what: string): T => {
      expect([what, r.status]).toEqual([what, expect.any(Number)]);
      if (r.status >= 300)
        throw new Error(`creating ${what} for org A answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    };

    // One of every resource, in org A.
    const deploymentId = ok(
      await a.post<Body>('/compat/deploy', { image: 'slipway-test/none:1', name: 'a-app', envVars: { K: 'v' } }),
      'deployment',
    ).deploymentId as string;
    const uploadId = ok(
      await a.call<Body>('POST', '/compat/uploads/zip', archiveForm(await makeZip({ 'index.html': 'a' }))),
      'upload',
    ).uploadId as string;
    const secretId = (
      ok(
        await a.post<{ data: Body }>('/platform/secrets', {
          name: 'a-git',
          value: `a-secret-${randomUUID()}`,
          allowedHosts: ['git.example.com'],
        }),
        'secret',
      ).data as Body
    ).id as string;
    const tokenId = (
      ok(await a.post<{ data: Body }>('/platform/tokens', { name: 'a-ci', scopes: ['deployment.read'] }), 'token')
        .data as Body
    ).id as string;
    const webhookUrl = `http://127.0.0.1:9/a-hook-${randomUUID()}`;
    ok(await a.call<Body>('PUT', '/platform/sales/webhook', { url: webhookUrl }), 'webhook');
    const apiKey = (ok(await a.post<{ data: Body }>('/platform/sales/api-keys'), 'api key').data as Body)
      .apiKey as string;
    const productId = (
      ok(
        await a.post<{ data: Body }>('/platform/products', {
          name: 'A plan',
          billingType: 'SUBSCRIPTION',
          price: 10,
          currency: 'EUR',
          interval: 'month',
        }),
        'product',
      ).data as Body
    ).id as string;
    const buyer = `buyer-${randomUUID()}@example.com`;
    const sale = ok(
      await a.post<{ data: Body }>('/platform/sales', {
        productId,
        buyer: { email: buyer, name: 'Buyer' },
        amount: 10,
        currency: 'EUR',
      }),
      'sale',
    ).data as Body;
    const { saleId, eventId, subscriptionId } = sale as { saleId: string; eventId: string; subscriptionId: string };
    expect(subscriptionId).toEqual(expect.any(String));
    const projectId = (
      ok(await a.post<{ data: Body }>('/platform/projects', { name: 'a-project' }), 'project').data as Body
    ).id as string;

    const volumeId = (
      ok(await a.post<{ data: Body }>('/platform/volumes', { name: 'a-data', sizeGb: 1, projectId }), 'volume')
        .data as Body
    ).id as string;

    const databaseId = (
      ok(
        await a.post<{ data: Body }>('/platform/databases', {
          projectId,
          engine: 'postgresql',
          name: 'a-db',
          sizeGb: 1,
        }),
        'database',
      ).data as Body
    ).id as string;

    const bucketId = (
      ok(await a.post<{ data: Body }>('/platform/buckets', { name: 'a-files', projectId }), 'bucket').data as Body
    ).id as string;

    // A database source at a public address (made without connecting), and A's database added by reference.
    const sourceId = (
      ok(
        await a.post<{ data: Body }>('/platform/database-sources', {
          projectId,
          name: 'a-source',
          engine: 'postgres',
          host: '8.8.8.8',
          port: 5432,
          database: 'a',
          user: 'a',
          password: 'a-password',
        }),
        'database source',
      ).data as Body
    ).id as string;

    // A support ticket about A's deployment, with a comment.
    const ticketId = (
      ok(
        await a.post<{ data: Body }>('/platform/tickets', { subject: 'a-ticket', body: 'a-body', deploymentId }),
        'ticket',
      ).data as Body
    ).id as string;
    ok(await a.post(`/platform/tickets/${ticketId}/comments`, { body: 'a-comment' }), 'ticket comment');
    // A Git connection (its token an org secret bound to a public address: no DNS) and a binding to A's deployment.
    const gitSecretId = (
      ok(
        await a.post<{ data: Body }>('/platform/secrets', {
          name: 'a-git-host',
          value: `a-git-token-${randomUUID()}`,
          allowedHosts: ['8.8.8.8'],
        }),
        'Git host secret',
      ).data as Body
    ).id as string;
    const connectionId = (
      ok(
        await a.post<{ data: Body }>('/platform/git/connections', {
          provider: 'gitea',
          baseUrl: 'https://8.8.8.8',
          tokenSecretId: gitSecretId,
        }),
        'Git connection',
      ).data as Body
    ).id as string;
    const binding = ok(
      await a.post<{ data: Body }>('/platform/git/bindings', {
        connectionId,
        repoUrl: 'https://8.8.8.8/a/app.git',
        branch: 'main',
        deploymentId,
      }),
      'Git binding',
    ).data as Body;
    const bindingId = binding.id as string;
    const webhookSecret = binding.webhookSecret as string;
    // A custom domain of A's deployment, pending (no DNS answers for it).
    const domainId = (
      ok(
        await a.post<{ data: Body }>('/platform/domains', { hostname: 'www.a-domain.example.com', deploymentId }),
        'domain',
      ).data as Body
    ).id as string;

    // The AI builder: a provider, a session with a checkpoint and a share in A's project; B's own project to remix into.
    const builderProjects = createProjectStore(h.db);
    const builderProject = async (orgId: string, userId: string) => {
      const id = randomUUID();
      const now = new Date();
      await builderProjects.insert({
        _id: id,
        orgId,
        name: `builder-${id}`,
        createdAt: now,
        updatedAt: now,
        createdBy: userId,
      });
      return id;
    };
    const builderProjectId = await builderProject(orgA.orgId, orgA.userId);
    const bProjectId = await builderProject(orgB.orgId, orgB.userId);
    const providerId = (
      ok(
        await a.post<{ data: Body }>('/platform/ai-providers', {
          name: 'a-ai',
          kind: 'openai_compatible',
          baseUrl: 'http://127.0.0.1:9/v1',
          apiKey: `sk-a-${randomUUID()}`,
          defaultModel: 'a-model',
        }),
        'AI provider',
      ).data as Body
    ).id as string;
    const sessionId = (
      ok(
        await a.post<{ data: Body }>('/platform/builder/sessions', { projectId: builderProjectId, providerId }),
        'builder session',
      ).data as Body
    ).id as string;
    const checkpointId = (
      (
        ok(
          await a.call<{ data: Body }>('PUT', `/platform/builder/sessions/${sessionId}/files`, {
            files: [{ path: 'index.html', content: 'a' }],
          }),
          'checkpoint',
        ).data as Body
      ).checkpoint as Body
    ).id as string;
    const slug = (
      ok(await a.post<{ data: Body }>(`/platform/builder/sessions/${sessionId}/share`, { access: 'remix' }), 'share')
        .data as Body
    ).slug as string;

    // What each path parameter names, by the collection it sits under.
    const idFor: Record<string, string> = {
      '/compat/deployments': deploymentId,
      '/platform/deployments': deploymentId,
      // A command ID of A's deployment's shape; B is refused on the deployment before the command is looked up.
      '/platform/deployments/{id}/commands': `stop:${deploymentId}`,
      '/platform/tokens': tokenId,
      '/platform/secrets': secretId,
      '/platform/sales': saleId,
      '/platform/subscriptions': subscriptionId,
      '/platform/sales/deliveries': eventId,
      '/platform/ai-providers': providerId,
      '/platform/builder/sessions': sessionId,
      // No turn was run: B is refused on the session before the turn is looked up.
      '/platform/builder/sessions/{id}/turns': randomUUID(),
      // No sync was asked for either: B is refused on the session first.
      '/platform/builder/sessions/{id}/sandbox/syncs': randomUUID(),
      '/platform/builder/shares': slug,
      '/platform/builder/projects': builderProjectId,
      '/platform/projects': projectId,
      '/platform/projects/{id}/members': orgA.userId,
      '/platform/users': orgA.userId,
      '/platform/volumes': volumeId,
      '/platform/deployments/{id}/volumes': volumeId,
      '/platform/databases': databaseId,
      // A's database by its own ID under a path of A's deployment: B is refused on the deployment first.
      '/platform/deployments/{id}/databases': databaseId,
      '/platform/deployments/{id}/databases/{dbId}/backups': randomUUID(),
      '/platform/databases/{id}/backups': randomUUID(),
      '/platform/databases/{id}/snapshots': randomUUID(),
      '/platform/databases/{id}/links': deploymentId,
      '/platform/buckets': bucketId,
      '/platform/domains': domainId,
      // A key ID of the right shape: B is refused on the bucket before the key is looked up.
      '/platform/buckets/{id}/credentials': 'SLWAAAAAAAAAAAAAAAAA',
      '/platform/buckets/{id}/links': deploymentId,
      '/platform/database-sources': sourceId,
      '/platform/git/connections': connectionId,
      '/platform/git/bindings': bindingId,
      // No question was asked: B is refused on the source first.
      '/platform/database-sources/{id}/questions': randomUUID(),
      '/platform/tickets': ticketId,
      // Credentials are the caller's organisation's own, named by their cloud: B has none for the one A set.
      '/platform/providers': 'cloud_b_container_apps',
    };
    // Bodies that point at A's resources, where a route takes one.
    const bodyFor: Record<string, unknown> = {
      'POST /compat/deploy/source': { name: 'b-steal', uploadId },
      'POST /platform/deployments': { name: 'b-steal', uploadId },
      'POST /platform/sales': { productId, buyer: { email: buyer, name: 'B' }, amount: 1, currency: 'EUR' },
      'PATCH /platform/subscriptions/{id}': { status: 'canceled' },
      'PATCH /platform/ai-providers/{id}': { enabled: false },
      'POST /platform/builder/sessions': { projectId: builderProjectId, providerId },
      'PUT /platform/builder/sessions/{id}/files': { files: [{ path: 'index.html', content: 'b' }] },
      'POST /platform/builder/sessions/{id}/revert': { checkpointId },
      'PUT /platform/builder/sessions/{id}/model': { model: 'a-model' },
      'PUT /platform/builder/sessions/{id}/provider': { providerId },
      'POST /platform/builder/sessions/{id}/share': { access: 'remix' },
      'POST /platform/builder/sessions/{id}/messages': { content: 'hello' },
      'POST /platform/builder/sessions/{id}/messages/stream': { content: 'hello' },
      'POST /platform/builder/shares/{slug}/remix': { projectId: bProjectId },
      'PUT /platform/builder/sessions/{id}/sandbox': { runtime: 'static' },
      'POST /platform/builder/sessions/{id}/git/push': {
        remoteUrl: 'https://git.example.com/a/repo.git',
        branch: 'main',
        message: 'b was here',
      },
      // A's project and A's Git token through B's import.
      'POST /platform/builder/import/git': {
        repoUrl: 'https://git.example.com/a/repo.git',
        projectId: builderProjectId,
        tokenSecretId: secretId,
      },
      'PUT /platform/projects/{id}': { description: 'b was here' },
      'POST /platform/projects/{id}/members': { userId: orgA.userId, role: 'viewer' },
      'PATCH /platform/projects/{id}/members/{userId}': { role: 'viewer' },
      'PATCH /platform/users/{id}': { role: 'viewer' },
      'PUT /platform/secrets/{id}': { value: 'b was here' },
      // A's project through B's own volume.
      'POST /platform/volumes': { name: 'b-steal', sizeGb: 1, projectId },
      // A's volume onto A's deployment, through B.
      'POST /platform/deployments/{id}/volumes': { volumeId, mountPath: '/data' },
      // A's project through B's own managed database; A's deployment linked to A's database.
      'POST /platform/databases': { projectId, engine: 'postgresql', name: 'b-steal', sizeGb: 1 },
      'POST /platform/databases/{id}/links': { deploymentId },
      'POST /platform/deployments/{id}/databases': { engine: 'redis' },
      // A's project through B's own bucket; A's deployment linked to A's bucket.
      'POST /platform/buckets': { name: 'b-steal', projectId },
      'POST /platform/buckets/{id}/links': { deploymentId },
      // A's deployment through B's own domain.
      'POST /platform/domains': { hostname: 'www.b-steal.example.com', deploymentId },
      // A's project and A's database through B's own source; A's source queried, asked and renamed by B.
      'POST /platform/database-sources': { projectId, databaseId, name: 'b-steal' },
      'PATCH /platform/database-sources/{id}': { name: 'b-steal' },
      'POST /platform/database-sources/{id}/query': { sql: 'SELECT 1' },
      'POST /platform/database-sources/{id}/ask': { question: 'How many rows?' },
      // A's deployment named by B's own ticket; A's ticket commented on and closed by B.
      'POST /platform/tickets': { subject: 'b-steal', body: 'b', deploymentId },
      'POST /platform/tickets/{id}/comments': { body: 'b was here' },
      'PATCH /platform/tickets/{id}': { status: 'closed' },
      // A's Git token through B's connection; A's deployment bound by B.
      'POST /platform/git/connections': { provider: 'gitea', baseUrl: 'https://8.8.8.8', tokenSecretId: gitSecretId },
      'POST /platform/git/bindings': { repoUrl: 'https://8.8.8.8/b/app.git', branch: 'main', deploymentId },
      // A's Git token and A's user through B's own resources.
      'POST /platform/projects': {
        name: 'b-steal',
        repoUrl: 'https://git.example.com/a/repo.git',
        gitTokenSecretId: secretId,
      },
    };
    const secondBodies: Record<string, unknown> = {
      // A's project as the target.
      'POST /platform/git/bindings': { repoUrl: 'https://8.8.8.8/b/app.git', branch: 'main', projectId },
      // A's Git token through B's deploy.
      'POST /compat/deploy/source': {
        name: 'b-steal-2',
        repoUrl: 'https://git.example.com/a/repo.git',
        gitTokenSecretId: secretId,
      },
      'POST /platform/deployments': {
        name: 'b-steal-3',
        repoUrl: 'https://git.example.com/a/repo.git',
        gitTokenSecretId: secretId,
      },
    };
    const aIds = [
      deploymentId,
      uploadId,
      secretId,
      tokenId,
      productId,
      saleId,
      eventId,
      subscriptionId,
      projectId,
      orgA.userId,
    ];
    aIds.push(providerId, sessionId, checkpointId, slug, volumeId, databaseId, bucketId, sourceId, ticketId);
    aIds.push(gitSecretId, connectionId, bindingId, webhookSecret, domainId);
    // A's cloud credentials, stored as a PUT that passed its check stores them (no cloud is reachable here).
    const cloudStore = createCloudCredentialStore(h.db, h.config.SECRETS_KEY);
    const cloudClientId = randomUUID();
    await cloudStore.promote(
      await cloudStore.putCandidate(orgA.orgId, 'cloud_b_container_apps', {
        tenantId: randomUUID(),
        clientId: cloudClientId,
        clientSecret: 'a-cloud-secret',
        subscriptionId: randomUUID(),
        resourceGroup: 'a-apps',
        environmentId: '/subscriptions/s/resourceGroups/a-apps/providers/Microsoft.App/managedEnvironments/a',
        regions: ['westeurope'],
      }),
      orgA.userId,
    );
    aIds.push(cloudClientId, 'a-cloud-secret');

    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as Doc;
    const swept: string[] = [];
    for (const [template, ops] of Object.entries(doc.paths)) {
      if (!template.startsWith('/compat') && !template.startsWith('/platform')) continue;
      const params = [...template.matchAll(/\{(\w+)\}/g)];
      let url = template;
      for (const p of params) {
        const collection = template.slice(0, p.index - 1);
        const id = idFor[collection];
        if (!id) throw new Error(`the sweep does not know what ${template} names: create one in org A and map it`);
        url = url.replace(p[0], id);
      }
      for (const [method, op] of Object.entries(ops)) {
        const key = `${method.toUpperCase()} ${template}`;
        // A stream that stays open: what it carries across organisations is tested in deployment-org-events.test.ts.
        if (key === 'GET /platform/deployment-events') continue;
        const bodies = op.requestBody
          ? [bodyFor[key] ?? {}, ...(secondBodies[key] ? [secondBodies[key]] : [])]
          : [undefined];
        for (const body of bodies) {
          const r = await b.call<Body>(method.toUpperCase(), url, body);
          swept.push(`${key} ${r.status}`);
          const names = params.length > 0 || JSON.stringify(body ?? {}).match(new RegExp(aIds.join('|')));
          if (names) {
            // Refused as not found or invalid: never a success, never a 403 that admits the resource exists.
            expect([key, body, r.status]).toEqual([key, body, expect.any(Number)]);
            expect([key, r.status >= 200 && r.status < 300]).toEqual([key, false]);
            expect([key, r.status]).not.toEqual([key, 403]);
            expect([key, [400, 404].includes(r.status)]).toEqual([key, true]);
          }
          // Whatever B may do in its own organisation, nothing of A's comes back (beyond what B itself sent).
          let seen: unknown = r.body;
          if (key === 'GET /platform/audit') {
            // B's own trail names what B itself sent earlier (its refused attempts on A's IDs), as the resource and
            // project of B's own events, and nothing else of A's.
            type Ev = { orgId: string; projectId: string | null; resource: { id: string | null } };
            const events = (r.body as { data: { events: Ev[] } }).data.events;
            expect(events.length).toBeGreaterThan(0);
            expect(events.filter((e) => e.orgId !== orgB.orgId)).toEqual([]);
            seen = events.map((e) => ({ ...e, projectId: null, resource: { ...e.resource, id: null } }));
          }
          const text = JSON.stringify(seen);
          const sent = url + JSON.stringify(body ?? {});
          for (const id of [...aIds, webhookUrl, apiKey, buyer].filter((x) => !sent.includes(x)))
            expect([key, text.includes(id)]).toEqual([key, false]);
        }
      }
    }
    expect(swept.length).toBeGreaterThanOrEqual(26);

    // The entitlement lookup, with B's own seller key, knows nothing of A's buyer.
    const bKey = (await b.post<{ data: Body }>('/platform/sales/api-keys')).body.data.apiKey as string;
    const lookup = await fetch(`${h.baseUrl}/api/v1/entitlements?email=${encodeURIComponent(buyer)}`, {
      headers: { authorization: `Bearer ${bKey}` },
    });
    expect(await lookup.json()).toEqual({ entitlements: [] });

    // A's credentials were not touched; removed now, so other files' reconciler sweeps do not try an account that no
    // cloud answers for.
    expect((await cloudStore.summary(orgA.orgId, 'cloud_b_container_apps'))?.identity).toBe(cloudClientId);
    await cloudStore.remove(orgA.orgId, 'cloud_b_container_apps');

    // Everything of A's is still there and unchanged.
    expect((await a.get<Body>(`/compat/deployments/${deploymentId}`)).status).toBe(200);
    expect((await a.get<Body>(`/platform/volumes/${volumeId}`)).status).toBe(200);
    expect((await a.get<Body>(`/platform/databases/${databaseId}`)).status).toBe(200);
    expect((await a.get<Body>(`/platform/buckets/${bucketId}`)).status).toBe(200);
    expect((await a.get<Body>(`/platform/git/bindings/${bindingId}`)).status).toBe(200);
    expect(
      (await a.get<{ data: { connections: Body[] } }>('/platform/git/connections')).body.data.connections.map(
        (c) => c.id,
      ),
    ).toEqual([connectionId]);
    // A's connection on B's own project.
    const bConnection = await b.post<{ data: Body }>('/platform/git/bindings', {
      connectionId,
      repoUrl: 'https://8.8.8.8/b/app.git',
      branch: 'main',
      projectId: bProjectId,
    });
    expect([bConnection.status, JSON.stringify(bConnection.body).includes(webhookSecret)]).toEqual([404, false]);
    expect((await a.get<Body>(`/platform/domains/${domainId}`)).status).toBe(200);
    expect(
      (await a.get<{ data: { id: string; revokedAt: string | null }[] }>('/platform/tokens')).body.data,
    ).toContainEqual(expect.objectContaining({ id: tokenId, revokedAt: null }));
    expect((await a.get<{ data: { id: string }[] }>('/platform/secrets')).body.data.map((s) => s.id)).toContain(
      secretId,
    );
    expect((await a.get<{ data: Body }>('/platform/sales/webhook')).body.data.url).toBe(webhookUrl);
    const project = await a.get<{ data: Body }>(`/platform/projects/${projectId}`);
    expect([project.status, project.body.data.description]).toEqual([200, undefined]);
    expect((await a.get<{ data: Body[] }>(`/platform/projects/${projectId}/members`)).body.data).toEqual([
      expect.objectContaining({ userId: orgA.userId, role: 'admin' }),
    ]);
    const aLookup = await fetch(`${h.baseUrl}/api/v1/entitlements?email=${encodeURIComponent(buyer)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(((await aLookup.json()) as { entitlements: Body[] }).entitlements).toEqual([
      expect.objectContaining({ saleId, status: 'active', subscriptionId }),
    ]);
    const aSession = await a.get<{ data: { head: Body; messages: unknown[] } }>(
      `/platform/builder/sessions/${sessionId}`,
    );
    expect([aSession.body.data.head.id, aSession.body.data.messages]).toEqual([checkpointId, []]);
    expect((await a.get<{ data: Body }>(`/platform/ai-providers/${providerId}`)).body.data.enabled).toBe(true);
    expect((await a.get(`/platform/builder/shares/${slug}`)).status).toBe(200);
    const ticket = await a.get<{ data: { status: string; comments: Body[]; statusHistory: Body[] } }>(
      `/platform/tickets/${ticketId}`,
    );
    expect([ticket.body.data.status, ticket.body.data.comments.length, ticket.body.data.statusHistory.length]).toEqual([
      'open',
      1,
      1,
    ]);
    expect((await a.del(`/compat/deployments/${deploymentId}`)).status).toBe(204);
  });
});
