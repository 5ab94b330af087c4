import { errorResult } from '@api/mcp/errors';
import { deploymentNotFound } from '@shared/deployments/errors';
import { AppError } from '@shared/errors';

describe('a deployment not found', () => {
  it('is a 404 naming the ID in its message and details, the same for an unknown ID and one of another org', () => {
    const e = deploymentNotFound('0b5f7a1e-1c44-4f3e-9d51-0d7c2f1a9b10');
    expect(e).toBeInstanceOf(AppError);
    expect(e.code).toBe('DEPLOYMENT_NOT_FOUND');
    expect(e.status).toBe(404);
    expect(e.message).toBe('No deployment 0b5f7a1e-1c44-4f3e-9d51-0d7c2f1a9b10 in this organisation.');
    expect(e.details).toEqual({ deploymentId: '0b5f7a1e-1c44-4f3e-9d51-0d7c2f1a9b10' });
  });

  it('points an agent at list_deployments', () => {
    const r = errorResult(deploymentNotFound('d1'), 'get_deployment', { deploymentId: 'd1' });
    const last = (r.content[0] as { text: string }).text.split('\n').at(-1)!;
    expect(JSON.parse(last)).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND', next: { tool: 'list_deployments' } });
  });
});
