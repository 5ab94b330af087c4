import { auditEvent } from '@shared/audit/event';

const principal = { org: { _id: 'o1' }, user: { _id: 'u1' }, token: { _id: 't1' } };

describe('an audit event', () => {
  it('names the token as the actor and reads the outcome from the status answered', () => {
    const e = auditEvent({
      principal,
      origin: 'platform',
      action: 'deployment.stop',
      resource: { type: 'deployment', id: 'd1' },
      projectId: 'p1',
      status: 404,
      ip: '203.0.113.9',
      userAgent: 'curl/8',
      requestId: 'r1',
    });
    expect(e).toEqual({
      _id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      at: expect.any(Date),
      orgId: 'o1',
      projectId: 'p1',
      actor: { type: 'token', userId: 'u1', tokenId: 't1' },
      action: 'deployment.stop',
      resource: { type: 'deployment', id: 'd1' },
      outcome: 'denied',
      status: 404,
      origin: 'platform',
      ip: '203.0.113.9',
      userAgent: 'curl/8',
      requestId: 'r1',
    });
  });

  it('leaves out what is unknown rather than storing empty fields, and bounds the user agent', () => {
    const e = auditEvent({
      principal,
      origin: 'mcp',
      action: 'resend_delivery',
      resource: { type: 'delivery', id: undefined },
      projectId: undefined,
      status: 200,
      ip: undefined,
      userAgent: 'x'.repeat(2000),
      requestId: 'r2',
    });
    expect(e.resource).toEqual({ type: 'delivery' });
    expect(e).not.toHaveProperty('projectId');
    expect(e).not.toHaveProperty('ip');
    expect(e.userAgent).toHaveLength(512);
    expect(e.outcome).toBe('success');
  });
});
