import SwaggerParser from '@apidevtools/swagger-parser';

import { type Harness, startHarness } from '../helpers/harness';

describe('OpenAPI document', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('openapi');
  });
  afterAll(() => h?.stop());

  it('validates as OpenAPI 3.1 with version 1.1.0 and documents every compat route with its errors', async () => {
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    // The validator does refuse a broken 3.1 document, so the line above can fail.
    await expect(SwaggerParser.validate({ ...structuredClone(doc), info: { title: 'x' } } as never)).rejects.toThrow();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.1.0');
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual(
      [
        'GET /compat/providers',
        'POST /compat/deploy',
        'POST /compat/deploy/source',
        'POST /compat/uploads/zip',
        'GET /compat/deployments',
        'GET /compat/deployments/{id}',
        'DELETE /compat/deployments/{id}',
        'GET /compat/deployments/{id}/logs',
        'GET /platform/deployments/{id}/events',
        'GET /platform/deployment-events',
        'POST /platform/tokens',
        'GET /platform/tokens/current',
        'POST /platform/session',
        'GET /platform/session',
        'DELETE /platform/session',
        'GET /platform/audit',
        'GET /platform/tokens',
        'DELETE /platform/tokens/{id}',
        'DELETE /platform/volumes/{id}',
        'POST /platform/secrets',
        'GET /platform/secrets',
        'PUT /platform/secrets/{id}',
        'DELETE /platform/secrets/{id}',
        'PUT /platform/sales/webhook',
        'GET /platform/sales/webhook',
        'POST /platform/sales/webhook/test',
        'POST /platform/sales/api-keys',
        'DELETE /platform/sales/api-keys',
        'POST /platform/products',
        'GET /platform/products',
        'GET /platform/sales',
        'POST /platform/sales',
        'POST /platform/sales/{saleId}/refund',
        'PATCH /platform/subscriptions/{id}',
        'GET /platform/sales/deliveries',
        'GET /platform/sales/deliveries/{eventId}',
        'POST /platform/sales/deliveries/{eventId}/resend',
        'GET /platform/projects',
        'POST /platform/projects',
        'GET /platform/projects/{id}',
        'PUT /platform/projects/{id}',
        'PUT /platform/providers/{provider}/credentials',
        'DELETE /platform/projects/{id}',
        'GET /platform/projects/{id}/members',
        'GET /platform/providers/credentials',
        'GET /platform/providers/{provider}/credentials',
        'POST /platform/projects/{id}/members',
        'PATCH /platform/projects/{id}/members/{userId}',
        'DELETE /platform/projects/{id}/members/{userId}',
        'DELETE /platform/providers/{provider}/credentials',
        'GET /platform/users',
        'POST /platform/users',
        'GET /platform/volumes',
        'GET /platform/volumes/{id}',
        'POST /platform/volumes',
        'POST /platform/deployments/{id}/databases',
        'GET /platform/deployments/{id}/databases',
        'GET /platform/deployments/{id}/databases/{dbId}',
        'DELETE /platform/deployments/{id}/databases/{dbId}',
        'POST /platform/deployments/{id}/databases/{dbId}/backups',
        'GET /platform/deployments/{id}/databases/{dbId}/backups',
        'GET /platform/deployments/{id}/databases/{dbId}/backups/{backupId}',
        'DELETE /platform/deployments/{id}/databases/{dbId}/backups/{backupId}',
        'POST /platform/deployments/{id}/databases/{dbId}/backups/{backupId}/restore',
        'PUT /platform/deployments/{id}/databases/{dbId}/backup-schedule',
        'GET /platform/deployments/{id}/databases/{dbId}/backup-schedule',
        'DELETE /platform/deployments/{id}/databases/{dbId}/backup-schedule',
        'POST /platform/databases',
        'GET /platform/databases',
        'GET /platform/databases/{id}',
        'DELETE /platform/databases/{id}',
        'POST /platform/databases/{id}/links',
        'GET /platform/databases/{id}/links',
        'DELETE /platform/databases/{id}/links/{deploymentId}',
        'GET /platform/databases/{id}/connection',
        'POST /platform/databases/{id}/backups',
        'GET /platform/databases/{id}/backups',
        'GET /platform/databases/{id}/backups/{backupId}',
        'DELETE /platform/databases/{id}/backups/{backupId}',
        'POST /platform/databases/{id}/backups/{backupId}/restore',
        'PUT /platform/databases/{id}/backup-schedule',
        'GET /platform/databases/{id}/backup-schedule',
        'DELETE /platform/databases/{id}/backup-schedule',
        'POST /platform/databases/{id}/snapshots',
        'GET /platform/databases/{id}/snapshots',
        'POST /platform/databases/{id}/snapshots/{snapshotId}/restore',
        'DELETE /platform/databases/{id}/snapshots/{snapshotId}',
        'POST /platform/buckets',
        'GET /platform/buckets',
        'GET /platform/buckets/{id}',
        'DELETE /platform/buckets/{id}',
        'POST /platform/buckets/{id}/credentials',
        'GET /platform/buckets/{id}/credentials',
        'DELETE /platform/buckets/{id}/credentials/{keyId}',
        'POST /platform/buckets/{id}/links',
        'GET /platform/buckets/{id}/links',
        'DELETE /platform/buckets/{id}/links/{deploymentId}',
        'POST /platform/database-sources',
        'GET /platform/database-sources',
        'GET /platform/database-sources/{id}',
        'PATCH /platform/database-sources/{id}',
        'DELETE /platform/database-sources/{id}',
        'POST /platform/database-sources/{id}/test',
        'GET /platform/database-sources/{id}/schema',
        'POST /platform/database-sources/{id}/query',
        'POST /platform/database-sources/{id}/ask',
        'GET /platform/database-sources/{id}/questions',
        'GET /platform/database-sources/{id}/questions/{questionId}',
        'GET /platform/organization',
        'PATCH /platform/organization',
        'POST /platform/tickets',
        'GET /platform/tickets',
        'GET /platform/tickets/{id}',
        'PATCH /platform/tickets/{id}',
        'POST /platform/tickets/{id}/comments',
        'POST /platform/git/connections',
        'GET /platform/git/connections',
        'DELETE /platform/git/connections/{id}',
        'POST /platform/git/bindings',
        'GET /platform/git/bindings',
        'GET /platform/git/bindings/{id}',
        'DELETE /platform/git/bindings/{id}',
        'GET /platform/git/bindings/{id}/deliveries',
        'POST /hooks/git/{bindingId}',
        'POST /platform/domains',
        'GET /platform/domains',
        'GET /platform/domains/{id}',
        'DELETE /platform/domains/{id}',
        'POST /platform/domains/{id}/verify',
        'GET /platform/usage',
        'PATCH /platform/users/{id}',
        'GET /platform/deployments',
        'POST /platform/deployments',
        'GET /platform/deployments/{id}',
        'DELETE /platform/deployments/{id}',
        'GET /platform/deployments/{id}/logs',
        'GET /platform/deployments/{id}/releases',
        'GET /platform/deployments/{id}/health',
        'GET /platform/deployments/{id}/container-metrics',
        'GET /platform/deployments/{id}/volumes',
        'POST /platform/deployments/{id}/volumes',
        'DELETE /platform/deployments/{id}/volumes/{volumeId}',
        'GET /platform/deployments/{id}/container-metrics/history',
        'POST /platform/deployments/{id}/redeploy',
        'PATCH /platform/deployments/{id}/env',
        'POST /platform/deployments/{id}/stop',
        'POST /platform/deployments/{id}/start',
        'POST /platform/deployments/{id}/scale',
        'POST /platform/deployments/{id}/rollback',
        'GET /platform/deployments/{id}/commands/{commandId}',
        'POST /platform/ai-providers',
        'GET /platform/ai-providers',
        'GET /platform/ai-providers/{id}',
        'PATCH /platform/ai-providers/{id}',
        'DELETE /platform/ai-providers/{id}',
        'POST /platform/ai-providers/{id}/test',
        'GET /platform/builder/providers',
        'POST /platform/builder/sessions',
        'GET /platform/builder/sessions/{id}',
        'GET /platform/builder/projects/{projectId}/sessions',
        'GET /platform/builder/sessions/{id}/files',
        'POST /platform/builder/projects/{projectId}/session',
        'PUT /platform/builder/sessions/{id}/files',
        'POST /platform/builder/sessions/{id}/revert',
        'PUT /platform/builder/sessions/{id}/model',
        'PUT /platform/builder/sessions/{id}/provider',
        'POST /platform/builder/sessions/{id}/share',
        'GET /platform/builder/shares/{slug}',
        'DELETE /platform/builder/shares/{slug}',
        'POST /platform/builder/shares/{slug}/remix',
        'POST /platform/builder/sessions/{id}/messages',
        'POST /platform/builder/sessions/{id}/messages/stream',
        'POST /platform/builder/sessions/{id}/publish',
        'GET /platform/builder/sessions/{id}/turns/{turnId}/events',
        'PUT /platform/builder/sessions/{id}/sandbox',
        'POST /platform/builder/sessions/{id}/sandbox/sync',
        'GET /platform/builder/sessions/{id}/sandbox/syncs/{syncId}',
        'GET /platform/builder/sessions/{id}/git',
        'POST /platform/builder/sessions/{id}/git/push',
        'POST /platform/builder/import/git',
        'GET /api/v1/entitlements',
      ].sort(),
    );
    expect(Object.keys(doc.paths['/compat/deploy']!.post!.responses).sort()).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
      '429',
      '500',
    ]);
  });

  it('states a response schema for every answer, every error status, the env limits and the one-source rule', async () => {
    type Schema = Record<string, unknown> & { $ref?: string };
    type Op = { responses: Record<string, { content?: Record<string, { schema: Schema }> }> };
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Op>>;
      components: { schemas: Record<string, Schema & { properties: Record<string, Schema> }> };
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const [status, res] of Object.entries(op.responses)) {
          // Only a 204 has no body; the others are JSON, or an event stream where the route streams.
          const content = res.content?.['application/json'] ?? res.content?.['text/event-stream'];
          if (status !== '204') expect([where, status, content?.schema]).toEqual([where, status, expect.any(Object)]);
        }
        for (const status of ['401', '429', '500'])
          expect([where, Object.keys(op.responses)]).toEqual([where, expect.arrayContaining([status])]);
        if (path.includes('{'))
          expect([where, Object.keys(op.responses)]).toEqual([where, expect.arrayContaining(['400', '404'])]);
        const errorSchema = path.startsWith('/compat')
          ? 'ErrorResponse'
          : path.startsWith('/platform') || path.startsWith('/hooks')
            ? 'PlatformError'
            : undefined;
        if (errorSchema)
          for (const [status, res] of Object.entries(op.responses))
            if (Number(status) >= 400)
              expect([where, status, res.content!['application/json']!.schema.$ref]).toEqual([
                where,
                status,
                `#/components/schemas/${errorSchema}`,
              ]);
      }
    }
    expect(Object.keys(doc.paths['/platform/secrets']!.post!.responses)).toContain('409');
    expect(Object.keys(doc.paths['/compat/deploy/source']!.post!.responses)).toContain('409');

    const { DeployRequest, SourceDeployRequest, CreateTokenRequest } = doc.components.schemas;
    for (const body of [DeployRequest!, SourceDeployRequest!]) {
      expect(body.properties.envVars).toMatchObject({
        maxProperties: 100,
        propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        additionalProperties: { type: 'string', pattern: expect.stringContaining('\\u0000') },
        description: expect.stringMatching(/65536 bytes/),
      });
    }
    expect(SourceDeployRequest).toMatchObject({ oneOf: [{ required: ['uploadId'] }, { required: ['repoUrl'] }] });
    expect(CreateTokenRequest!.properties.expiresIn).toMatchObject({
      anyOf: expect.arrayContaining([expect.objectContaining({ minimum: 60 })]),
      description: expect.stringMatching(/at least 60 seconds/),
    });
  });

  it('documents the hooks origin: no token, the signature headers of each scheme, the push payload', async () => {
    type Op = {
      security: unknown[];
      parameters: { in: string; name: string }[];
      requestBody: { content: Record<string, { schema: { $ref?: string } }> };
      responses: Record<string, unknown>;
    };
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Op>>;
    };
    const hook = doc.paths['/hooks/git/{bindingId}']!.post!;
    expect(hook.security).toEqual([]);
    expect(hook.parameters.filter((p) => p.in === 'header').map((p) => p.name)).toEqual(
      expect.arrayContaining([
        'x-hub-signature-256',
        'x-github-event',
        'x-github-delivery',
        'x-gitlab-token',
        'x-gitlab-event',
        'x-gitlab-event-uuid',
        'x-gitea-signature',
        'x-gitea-delivery',
        'x-slipway-signature',
        'x-slipway-timestamp',
        'x-slipway-delivery',
      ]),
    );
    expect(hook.requestBody.content['application/json']!.schema.$ref).toBe('#/components/schemas/GitPushPayload');
    expect(Object.keys(hook.responses)).toEqual(expect.arrayContaining(['200', '202', '401', '404', '413', '429']));
    // Every other route still takes a bearer token (or, on /platform and /compat, the web console's session cookie).
    expect(doc.paths['/platform/git/bindings']!.post!.security).toEqual([{ bearerAuth: [] }, { consoleSession: [] }]);
    expect(doc.paths['/api/v1/entitlements']!.get!.security).toEqual([{ bearerAuth: [] }]);
  });

  it('serves a rendered reference at /docs', async () => {
    const page = await fetch(`${h.baseUrl}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
  });
});
