import { aiClientOptionsFrom } from '@shared/ai/client';
import { errorForStatus, providerText, retryAfterMs } from '@shared/ai/errors';
import { collectAnswer } from '@shared/ai/turn';
import type { ChatEvent } from '@shared/ai/types';
import { aiProviderView, CreateAiProviderRequest, UpdateAiProviderRequest } from '@shared/ai-providers/schemas';
import { parseConfig } from '@shared/config';

describe('provider errors', () => {
  it('reads retry-after as seconds, as an HTTP date, and OpenAI’s retry-after-ms', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(retryAfterMs({ 'retry-after': '7' }, now)).toBe(7000);
    expect(retryAfterMs({ 'retry-after': 'Mon, 23 Nov 2026 12:00:30 GMT' }, now)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': 'Mon, 23 Nov 2026 11:00:00 GMT' }, now)).toBe(0);
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '1' }, now)).toBe(250);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
  });

  it('classes statuses and provider error types', () => {
    expect(errorForStatus(401, {}).code).toBe('provider_auth');
    expect(errorForStatus(403, {}).code).toBe('provider_auth');
    expect(errorForStatus(429, {}).code).toBe('rate_limited');
    expect(errorForStatus(529, {}).code).toBe('rate_limited');
    expect(errorForStatus(503, {}).code).toBe('provider_unavailable');
    expect(errorForStatus(400, { message: 'max_tokens: too large' })).toMatchObject({
      code: 'provider_bad_request',
      message: expect.stringContaining('max_tokens: too large'),
    });
  });

  it('removes the key and control characters from the provider’s words', () => {
    expect(providerText('Incorrect API key provided: sk-secret-123.\n\u001b[31m', 'sk-secret-123')).toBe(
      'Incorrect API key provided: [redacted]. [31m',
    );
  });
});

describe('AI provider request schemas', () => {
  const valid = {
    name: 'Main OpenAI',
    kind: 'openai_compatible',
    baseUrl: 'https://api.openai.com/v1/',
    apiKey: 'sk-proj-abc',
    defaultModel: 'gpt-4o-mini',
  };

  it('normalises baseUrl and defaults enabled', () => {
    expect(CreateAiProviderRequest.parse(valid)).toEqual({
      ...valid,
      baseUrl: 'https://api.openai.com/v1',
      enabled: true,
    });
  });

  it.each([
    ['ftp://api.openai.com/v1', /https:\/\/ or http:\/\//],
    ['https://user:pw@api.openai.com/v1', /credentials/],
    ['https://api.openai.com/v1?key=x', /query/],
    ['api.openai.com', /not a URL/],
  ])('refuses baseUrl %s', (baseUrl, why) => {
    const result = CreateAiProviderRequest.safeParse({ ...valid, baseUrl });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.message).toMatch(why);
  });

  it('refuses an unknown kind, a field it does not know and an empty change', () => {
    expect(CreateAiProviderRequest.safeParse({ ...valid, kind: 'gemini' }).success).toBe(false);
    expect(CreateAiProviderRequest.safeParse({ ...valid, apiKeySealed: {} }).success).toBe(false);
    expect(UpdateAiProviderRequest.safeParse({}).success).toBe(false);
    expect(UpdateAiProviderRequest.safeParse({ kind: 'anthropic' }).success).toBe(false);
  });

  it('shows a provider without its key', () => {
    const at = new Date('2026-11-23T12:00:00Z');
    const view = aiProviderView({
      _id: '6f1c0d9e-1111-4222-8333-444455556666',
      orgId: 'org-1',
      name: 'x',
      kind: 'anthropic',
      baseUrl: 'https://api.anthropic.com',
      defaultModel: 'claude-sonnet-4-20250514',
      enabled: true,
      createdAt: at,
      updatedAt: at,
      ...({ apiKeySealed: { iv: 'i', tag: 't', ciphertext: 'c' } } as object),
    });
    expect(view).toEqual({
      id: '6f1c0d9e-1111-4222-8333-444455556666',
      name: 'x',
      kind: 'anthropic',
      baseUrl: 'https://api.anthropic.com',
      defaultModel: 'claude-sonnet-4-20250514',
      models: [],
      enabled: true,
      createdAt: '2026-11-23T12:00:00.000Z',
      updatedAt: '2026-11-23T12:00:00.000Z',
    });
  });
});

describe('collectAnswer', () => {
  async function* stream(events: ChatEvent[]) {
    for (const e of events) yield e;
  }

  it('gathers text, tool calls, usage and the stop, passing each event on as it comes', async () => {
    const seen: ChatEvent['type'][] = [];
    const answer = await collectAnswer(
      stream([
        { type: 'text', text: 'Writing ' },
        { type: 'text', text: 'it.' },
        { type: 'tool_call', call: { id: 'c1', name: 'write_file', arguments: { path: 'index.html' } } },
        { type: 'usage', inputTokens: 3, outputTokens: 4 },
        { type: 'stop', reason: 'tool_use', raw: 'tool_calls' },
      ]),
      (e) => void seen.push(e.type),
    );
    expect(answer).toEqual({
      text: 'Writing it.',
      toolCalls: [{ id: 'c1', name: 'write_file', arguments: { path: 'index.html' } }],
      usage: { inputTokens: 3, outputTokens: 4 },
      stop: { reason: 'tool_use', raw: 'tool_calls' },
    });
    expect(seen).toEqual(['text', 'text', 'tool_call', 'usage', 'stop']);
  });
});

describe('AI provider settings', () => {
  it('refuse private providers unless ALLOW_PRIVATE_AI_PROVIDERS is set, and bound the retries', () => {
    expect(aiClientOptionsFrom(parseConfig({}))).toEqual({
      allowPrivate: false,
      idleTimeoutMs: 120_000,
      retry: { attempts: 3, maxDelayMs: 30_000 },
    });
    const set = parseConfig({ ALLOW_PRIVATE_AI_PROVIDERS: 'true', AI_RETRY_ATTEMPTS: '1', AI_RETRY_MAX_DELAY_S: '2' });
    expect(aiClientOptionsFrom(set)).toMatchObject({ allowPrivate: true, retry: { attempts: 1, maxDelayMs: 2000 } });
    expect(() => parseConfig({ AI_RETRY_ATTEMPTS: '50' })).toThrow(/AI_RETRY_ATTEMPTS/);
  });
});
