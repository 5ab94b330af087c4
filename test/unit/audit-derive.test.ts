import { deriveAudit } from '@api/http/audit';
import { outcomeOf } from '@shared/audit/event';

type M = 'post' | 'put' | 'patch' | 'delete';

describe('audit events derived from a route’s method and path', () => {
  it.each([
    ['delete', '/deployments/:id', {}, { action: 'deployment.delete', resource: 'deployment', idParam: 'id' }],
    ['post', '/deployments/:id/stop', {}, { action: 'deployment.stop', resource: 'deployment', idParam: 'id' }],
    ['post', '/projects', {}, { action: 'project.create', resource: 'project' }],
    ['put', '/projects/:id', {}, { action: 'project.update', resource: 'project', idParam: 'id', projectParam: 'id' }],
    ['post', '/projects/:id/members', {}, { action: 'member.create', resource: 'member', projectParam: 'id' }],
    [
      'patch',
      '/projects/:id/members/:userId',
      {},
      { action: 'member.update', resource: 'member', idParam: 'userId', projectParam: 'id' },
    ],
    [
      'post',
      '/sales/deliveries/:eventId/resend',
      {},
      { action: 'delivery.resend', resource: 'delivery', idParam: 'eventId' },
    ],
    ['delete', '/sales/api-keys', {}, { action: 'api-key.delete', resource: 'api-key' }],
    ['put', '/builder/sessions/:id/model', {}, { action: 'session.model.update', resource: 'session', idParam: 'id' }],
    // Overrides where the path says it wrongly.
    ['post', '/deploy', { resource: 'deployment' }, { action: 'deployment.create', resource: 'deployment' }],
    ['post', '/uploads/zip', { resource: 'upload' }, { action: 'upload.create', resource: 'upload' }],
    [
      'post',
      '/sales/webhook/test',
      { action: 'webhook.test', resource: 'webhook' },
      { action: 'webhook.test', resource: 'webhook' },
    ],
  ] as [M, string, object, object][])('%s %s', (method, path, audit, want) => {
    expect(deriveAudit({ method, path, audit })).toEqual(want);
  });

  it('reads 403 and a route’s 404 as denied, other errors as failures', () => {
    expect([200, 201, 204, 400, 403, 404, 409, 429, 500].map(outcomeOf)).toEqual([
      'success',
      'success',
      'success',
      'failure',
      'denied',
      'denied',
      'failure',
      'failure',
      'failure',
    ]);
  });
});
