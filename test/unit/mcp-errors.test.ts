import { errorResult } from '@api/mcp/errors';
import { AppError } from '@shared/errors';

const textOf = (r: ReturnType<typeof errorResult>) => (r.content[0] as { type: 'text'; text: string }).text;

describe('MCP error results', () => {
  it('are text only: the code and message first, the whole failure as JSON on the last line', () => {
    const e = new AppError('RATE_LIMIT_EXCEEDED', 'Rate limit of 300 requests per 300 s reached; retry after 37 s.', {
      limit: 300,
      windowSeconds: 300,
      retryAfterSeconds: 37,
    });
    const r = errorResult(e, 'list_deployments', { limit: 1 });
    expect(r.isError).toBe(true);
    // structuredContent is the tool's answer, checked against its outputSchema by the client: never a failure's.
    expect(r).not.toHaveProperty('structuredContent');
    expect(r.content).toHaveLength(1);
    const lines = textOf(r).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('RATE_LIMIT_EXCEEDED: Rate limit of 300 requests per 300 s reached; retry after 37 s.');
    expect(JSON.parse(lines[1]!)).toEqual({
      code: 'RATE_LIMIT_EXCEEDED',
      message: e.message,
      retryable: true,
      retryAfterS: 37,
      next: { tool: 'list_deployments', arguments: { limit: 1 }, why: 'The same call succeeds after 37 s.' },
      details: { limit: 300, windowSeconds: 300 },
    });
  });

  it('keep the JSON on the last line when the message spans several, and show compat codes', () => {
    const message = 'Invalid arguments for scale:\n✖ Unrecognized key: "size"\n  → at size';
    const lines = textOf(errorResult(new AppError('INVALID_REQUEST', message), 'scale', {})).split('\n');
    expect(lines[0]).toBe('INVALID_REQUEST: Invalid arguments for scale:');
    expect(JSON.parse(lines.at(-1)!)).toEqual({ code: 'INVALID_REQUEST', message, retryable: false });

    const gone = textOf(errorResult(new AppError('TOKEN_NOT_FOUND', 'No token t1.'), 'whoami', {}));
    expect(gone.split('\n')[0]).toBe('INVALID_REQUEST: No token t1.');
  });

  it('call a cloud that did not answer retryable, with the same call next, its secrets not echoed', () => {
    const args = { provider: 'cloud_c_ecs_fargate', credentials: { secretAccessKey: 'x' } };
    const e = new AppError('CLOUD_UNREACHABLE', 'Slipway could not reach cloud_c_ecs_fargate.', {
      provider: 'cloud_c_ecs_fargate',
    });
    const text = textOf(errorResult(e, 'set_cloud_credentials', args));
    expect(JSON.parse(text.split('\n').at(-1)!)).toMatchObject({
      code: 'INTERNAL_ERROR',
      retryable: true,
      next: { tool: 'set_cloud_credentials' },
      details: { provider: 'cloud_c_ecs_fargate' },
    });
    expect(text).not.toContain('secretAccessKey');
  });
});
