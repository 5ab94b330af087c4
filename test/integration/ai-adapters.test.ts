import { type AiClientOptions, createAiClient } from '@shared/ai/client';
import { AiProviderError } from '@shared/ai/errors';
import type { ChatEvent, ChatRequest, ProviderKind, ToolSpec } from '@shared/ai/types';

import {
  anthropic,
  openai,
  type ProviderDouble,
  splitInside,
  startAnthropicDouble,
  startOpenAiDouble,
  variants,
} from '../helpers/ai-doubles';

/**
 * The adapters are the real code, over real sockets, against contract-level doubles of each provider on loopback
 * (test/helpers/ai-doubles.ts). Loopback is allowed only because the doubles live there.
 */
const OPTIONS: AiClientOptions = {
  allowPrivate: true,
  idleTimeoutMs: 20_000,
  retry: { attempts: 2, maxDelayMs: 5_000 },
};
const client = createAiClient(OPTIONS);

const WRITE_FILE: ToolSpec = {
  name: 'write_file',
  description: 'Write a file of the app',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, content: { type: 'string' } },
    required: ['path', 'content'],
  },
};

let oa: ProviderDouble;
let an: ProviderDouble;
beforeAll(async () => {
  [oa, an] = await Promise.all([
    startOpenAiDouble({ models: ['gpt-4o-mini'] }),
    startAnthropicDouble({ models: ['claude-sonnet-4-20250514'] }),
  ]);
});
afterAll(async () => {
  await Promise.all([oa?.close(), an?.close()]);
});

function request(kind: ProviderKind, d: ProviderDouble, extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    kind,
    baseUrl: d.baseUrl,
    apiKey: d.apiKey,
    model: kind === 'anthropic' ? 'claude-sonnet-4-20250514' : 'gpt-4o-mini',
    system: 'You edit the files of a web app.',
    messages: [{ role: 'user', content: 'Make a page that says café' }],
    tools: [WRITE_FILE],
    ...extra,
  };
}

async function events(req: ChatRequest, via = client): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const e of via.streamChat(req)) out.push(e);
  return out;
}

/** The events that arrived before the stream failed, and the error it failed with. */
async function failing(req: ChatRequest, via = client): Promise<{ seen: ChatEvent[]; error: AiProviderError }> {
  const seen: ChatEvent[] = [];
  try {
    for await (const e of via.streamChat(req)) seen.push(e);
  } catch (error) {
    if (!(error instanceof AiProviderError)) throw error;
    return { seen, error };
  }
  throw new Error(`the stream ended without an error: ${JSON.stringify(seen)}`);
}

const chatRequests = (d: ProviderDouble) => d.requests.filter((r) => r.method === 'POST');

/** Headers that would describe this machine, or our traces and settings, to whatever server baseUrl names. */
const telling = (headers: Record<string, unknown>) =>
  Object.keys(headers).filter((h) =>
    /^(x-stainless-(os|arch|runtime-version)|traceparent|tracestate|baggage|openai-organization|openai-project)$/.test(
      h,
    ),
  );

describe('OpenAI-compatible adapter against its double', () => {
  beforeEach(() => oa.requests.splice(0));

  it('streams text deltas, then usage, then the stop, and sends the request in OpenAI’s shape', async () => {
    oa.reply({ stream: openai.text(['Hel', 'lo ', 'wörld'], { usage: [12, 3] }) });
    expect(await events(request('openai_compatible', oa))).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo ' },
      { type: 'text', text: 'wörld' },
      { type: 'usage', inputTokens: 12, outputTokens: 3 },
      { type: 'stop', reason: 'end_turn', raw: 'stop' },
    ]);
    const [sent] = chatRequests(oa);
    expect(sent!.path).toBe('/v1/chat/completions');
    expect(sent!.headers.authorization).toBe(`Bearer ${oa.apiKey}`);
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(sent!.headers['user-agent']).toMatch(/^OpenAI\/JS /);
    expect(telling(sent!.headers)).toEqual([]);
    expect(sent!.body).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You edit the files of a web app.' },
        { role: 'user', content: 'Make a page that says café' },
      ],
      tools: [{ type: 'function', function: WRITE_FILE }],
    });
  });

  it('assembles tool calls from index-keyed fragments split mid-JSON and mid-character', async () => {
    const writes = openai.toolCalls(
      [
        { id: 'call_a1', name: 'write_file', args: ['{"pa', 'th":"index.html","con', 'tent":"<h1>Café ☕</h1>"}'] },
        { id: 'call_b2', name: 'write_file', args: ['{"path":"s', 'tyle.css","content":"h1{color:red}"}'] },
      ],
      { usage: [40, 25] },
    );
    oa.reply({ stream: splitInside(splitInside(writes, '☕'), 'é') });
    expect(await events(request('openai_compatible', oa))).toEqual([
      {
        type: 'tool_call',
        call: { id: 'call_a1', name: 'write_file', arguments: { path: 'index.html', content: '<h1>Café ☕</h1>' } },
      },
      {
        type: 'tool_call',
        call: { id: 'call_b2', name: 'write_file', arguments: { path: 'style.css', content: 'h1{color:red}' } },
      },
      { type: 'usage', inputTokens: 40, outputTokens: 25 },
      { type: 'stop', reason: 'tool_use', raw: 'tool_calls' },
    ]);
  });

  it('tells apart whole tool calls sent without an index by their ids (as Gemini’s OpenAI endpoint does)', async () => {
    oa.reply({
      stream: variants.unindexedToolCalls([
        { id: 'call_1', path: 'a.html' },
        { id: 'call_2', path: 'b.html' },
      ]),
    });
    const calls = (await events(request('openai_compatible', oa))).filter((e) => e.type === 'tool_call');
    expect(calls).toEqual([
      { type: 'tool_call', call: { id: 'call_1', name: 'write_file', arguments: { path: 'a.html' } } },
      { type: 'tool_call', call: { id: 'call_2', name: 'write_file', arguments: { path: 'b.html' } } },
    ]);
  });

  it('keeps a text character whose bytes arrive in two writes whole', async () => {
    oa.reply({ stream: splitInside(openai.text(['日本語のページ']), '本') });
    const got = await events(request('openai_compatible', oa));
    expect(got.filter((e) => e.type === 'text')).toEqual([{ type: 'text', text: '日本語のページ' }]);
  });

  it('reads a usage chunk with `choices: null`', async () => {
    oa.reply({ stream: variants.usageWithNullChoices('ok', [7, 1]) });
    expect(await events(request('openai_compatible', oa))).toEqual([
      { type: 'text', text: 'ok' },
      { type: 'usage', inputTokens: 7, outputTokens: 1 },
      { type: 'stop', reason: 'end_turn', raw: 'stop' },
    ]);
  });

  it('writes earlier tool calls and their results back in OpenAI’s shape', async () => {
    oa.reply({ stream: openai.text(['done']) });
    await events(
      request('openai_compatible', oa, {
        messages: [
          { role: 'user', content: 'make it' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'call_1', name: 'write_file', arguments: { path: 'a' } }],
          },
          { role: 'tool', toolCallId: 'call_1', content: 'written' },
        ],
      }),
    );
    expect(chatRequests(oa)[0]!.body!.messages).toEqual([
      { role: 'system', content: 'You edit the files of a web app.' },
      { role: 'user', content: 'make it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '{"path":"a"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'written' },
    ]);
  });

  it('retries a 429 after its retry-after and then streams the answer', async () => {
    oa.reply(openai.rateLimited('0'), { stream: openai.text(['after the wait']) });
    const got = await events(request('openai_compatible', oa));
    expect(got[0]).toEqual({ type: 'text', text: 'after the wait' });
    expect(chatRequests(oa)).toHaveLength(2);
  });

  it('ends with rate_limited once the retries are spent', async () => {
    oa.reply(openai.rateLimited('0'), openai.rateLimited('0'), openai.rateLimited('0'), { stream: openai.text(['x']) });
    const { error } = await failing(request('openai_compatible', oa));
    expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(chatRequests(oa)).toHaveLength(1 + OPTIONS.retry.attempts);
    oa.requests.splice(0);
    await events(request('openai_compatible', oa)); // the answer left in the queue: the next turn works
  });

  it('ends at once with rate_limited when the provider asks to wait longer than the cap', async () => {
    oa.reply(openai.rateLimited('120'));
    const { error } = await failing(request('openai_compatible', oa));
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 120_000 });
    expect(error.message).toMatch(/wait 120 s/);
    expect(chatRequests(oa)).toHaveLength(1);
  });

  it('calls a refused key provider_auth without repeating the key', async () => {
    const { error } = await failing(request('openai_compatible', oa, { apiKey: 'sk-wrong-key-123456' }));
    expect(error).toMatchObject({ code: 'provider_auth', status: 401 });
    expect(error.message).not.toContain('sk-wrong-key-123456');
    expect(chatRequests(oa)).toHaveLength(1);
  });

  it('passes a 400 on with the provider’s message', async () => {
    oa.reply(openai.error(400, "The model 'gpt-9' does not exist", 'invalid_request_error', 'model_not_found'));
    const { error } = await failing(request('openai_compatible', oa));
    expect(error.code).toBe('provider_bad_request');
    expect(error.message).toContain("The model 'gpt-9' does not exist");
  });

  it('calls an unknown model (404) provider_bad_request in the provider’s words, without a retry', async () => {
    const said = 'The model `gpt-9` does not exist or you do not have access to it.';
    oa.reply(openai.error(404, said, 'invalid_request_error', 'model_not_found'));
    const { error } = await failing(request('openai_compatible', oa, { model: 'gpt-9' }));
    expect(error).toMatchObject({ code: 'provider_bad_request', status: 404 });
    expect(error.message).toBe(`the provider refused the request (HTTP 404): ${said}`);
    expect(chatRequests(oa)).toHaveLength(1);
  });

  it('sends none of this process’s OpenAI settings (organisation, project) to the provider', async () => {
    const before = { org: process.env.OPENAI_ORG_ID, project: process.env.OPENAI_PROJECT_ID };
    process.env.OPENAI_ORG_ID = 'org-of-this-installation';
    process.env.OPENAI_PROJECT_ID = 'proj-of-this-installation';
    try {
      oa.reply({ stream: openai.text(['ok']) });
      await events(request('openai_compatible', oa));
    } finally {
      for (const [name, value] of [
        ['OPENAI_ORG_ID', before.org],
        ['OPENAI_PROJECT_ID', before.project],
      ] as const)
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
    expect(JSON.stringify(chatRequests(oa)[0]!.headers)).not.toMatch(/of-this-installation/);
  });

  it('ends with a typed error when the stream reports one midway, keeping what came before', async () => {
    const midway =
      'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n';
    oa.reply({ stream: [openai.chunk({ role: 'assistant', content: 'Partial' }), midway] });
    const { seen, error } = await failing(request('openai_compatible', oa));
    expect(seen).toEqual([{ type: 'text', text: 'Partial' }]);
    expect(error.code).toBe('provider_unavailable');
    expect(chatRequests(oa)).toHaveLength(1); // text was streamed: a retry would repeat it
  });

  it('calls a stream that stops before the model finished provider_protocol', async () => {
    oa.reply({ stream: [openai.chunk({ role: 'assistant', content: 'Half' })] });
    expect((await failing(request('openai_compatible', oa))).error.code).toBe('provider_protocol');
    oa.reply({ stream: ['data: {"id": "chatcmpl-1", "choices": [\n\n'] });
    expect((await failing(request('openai_compatible', oa))).error.code).toBe('provider_protocol');
  });

  it('tests a provider by listing its models, and names the class of a failure', async () => {
    const conn = { kind: 'openai_compatible' as const, baseUrl: oa.baseUrl, apiKey: oa.apiKey };
    await expect(client.testProvider(conn)).resolves.toEqual({ ok: true, models: ['gpt-4o-mini'] });
    expect(oa.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/models' });
    await expect(client.testProvider({ ...conn, apiKey: 'sk-nope-0000' })).resolves.toMatchObject({
      ok: false,
      error: 'provider_auth',
    });
  });
});

describe('Anthropic adapter against its double', () => {
  beforeEach(() => an.requests.splice(0));

  it('streams text, skipping ping and unknown events, and sends the request in Anthropic’s shape', async () => {
    const unknown = anthropic.event('content_block_annotation', { index: 0, note: 'from a later API version' });
    an.reply({
      stream: anthropic.message(
        [
          [
            ...anthropic.textBlock(0, ['Hel', 'lo']).slice(0, 2),
            anthropic.ping,
            unknown,
            ...anthropic.textBlock(0, [' wörld']).slice(1),
          ],
        ],
        { usage: [25, 9] },
      ),
    });
    expect(await events(request('anthropic', an))).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: ' wörld' },
      { type: 'usage', inputTokens: 25, outputTokens: 9 },
      { type: 'stop', reason: 'end_turn', raw: 'end_turn' },
    ]);
    const [sent] = chatRequests(an);
    expect(sent!.path).toBe('/v1/messages');
    expect(sent!.headers['x-api-key']).toBe(an.apiKey);
    expect(sent!.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent!.headers.authorization).toBeUndefined();
    expect(sent!.headers['user-agent']).toMatch(/^Anthropic\/JS /);
    expect(telling(sent!.headers)).toEqual([]);
    expect(sent!.body).toEqual({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 8192,
      stream: true,
      system: 'You edit the files of a web app.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Make a page that says café' }] }],
      tools: [{ name: 'write_file', description: WRITE_FILE.description, input_schema: WRITE_FILE.parameters }],
    });
  });

  it('assembles a tool_use block from input_json_delta pieces split mid-JSON and mid-character', async () => {
    const writes = anthropic.message(
      [
        anthropic.textBlock(0, ['Writing the page.']),
        anthropic.toolUseBlock(1, 'toolu_01A', 'write_file', [
          '',
          '{"path": "index',
          '.html", "content": "<p>Grüße 🚀',
          '</p>"}',
        ]),
      ],
      { stopReason: 'tool_use', usage: [100, 40] },
    );
    an.reply({ stream: splitInside(splitInside(writes, '🚀'), 'ü') });
    expect(await events(request('anthropic', an))).toEqual([
      { type: 'text', text: 'Writing the page.' },
      {
        type: 'tool_call',
        call: { id: 'toolu_01A', name: 'write_file', arguments: { path: 'index.html', content: '<p>Grüße 🚀</p>' } },
      },
      { type: 'usage', inputTokens: 100, outputTokens: 40 },
      { type: 'stop', reason: 'tool_use', raw: 'tool_use' },
    ]);
  });

  it('drops a tool call cut by max_tokens rather than reading its half input as a smaller call', async () => {
    an.reply({
      stream: anthropic.message([anthropic.textBlock(0, ['Writing the page.']), variants.cutToolUse(1, 'toolu_cut')], {
        stopReason: 'max_tokens',
        usage: [100, 8192],
      }),
    });
    expect(await events(request('anthropic', an))).toEqual([
      { type: 'text', text: 'Writing the page.' },
      { type: 'usage', inputTokens: 100, outputTokens: 8192 },
      { type: 'stop', reason: 'max_tokens', raw: 'max_tokens' },
    ]);
  });

  it('goes by data.type when a proxy dropped the event lines', async () => {
    const writes = anthropic.message([anthropic.textBlock(0, ['still read'])]);
    an.reply({ stream: variants.withoutEventLines(writes) });
    expect(await events(request('anthropic', an))).toEqual([
      { type: 'text', text: 'still read' },
      { type: 'usage', inputTokens: 10, outputTokens: 5 },
      { type: 'stop', reason: 'end_turn', raw: 'end_turn' },
    ]);
  });

  it('merges tool results into one user message, as Anthropic requires', async () => {
    an.reply({ stream: anthropic.message([anthropic.textBlock(0, ['ok'])]) });
    await events(
      request('anthropic', an, {
        messages: [
          { role: 'user', content: 'make two files' },
          {
            role: 'assistant',
            content: 'Sure.',
            toolCalls: [
              { id: 'toolu_1', name: 'write_file', arguments: { path: 'a' } },
              { id: 'toolu_2', name: 'write_file', arguments: { path: 'b' } },
            ],
          },
          { role: 'tool', toolCallId: 'toolu_1', content: 'written' },
          { role: 'tool', toolCallId: 'toolu_2', content: 'path refused', isError: true },
        ],
      }),
    );
    expect(chatRequests(an)[0]!.body!.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'make two files' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Sure.' },
          { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: { path: 'a' } },
          { type: 'tool_use', id: 'toolu_2', name: 'write_file', input: { path: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'written' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'path refused', is_error: true },
        ],
      },
    ]);
  });

  it('retries a 529 overload and a 429 whose retry-after is an HTTP date, then streams', async () => {
    const soon = new Date(Date.now() + 1000).toUTCString();
    an.reply(anthropic.overloaded(), anthropic.rateLimited(soon), {
      stream: anthropic.message([anthropic.textBlock(0, ['third time'])]),
    });
    const got = await events(request('anthropic', an));
    expect(got[0]).toEqual({ type: 'text', text: 'third time' });
    expect(chatRequests(an)).toHaveLength(3);
  });

  it('ends with rate_limited when the overload outlasts the retries', async () => {
    an.reply(anthropic.overloaded(), anthropic.overloaded(), anthropic.overloaded());
    const { error } = await failing(request('anthropic', an));
    expect(error).toMatchObject({ code: 'rate_limited', status: 529 });
    expect(chatRequests(an)).toHaveLength(3);
  });

  it('retries an overloaded_error event that comes before any content', async () => {
    an.reply(
      { stream: [anthropic.messageStart(10), anthropic.ping, anthropic.streamError('overloaded_error', 'Overloaded')] },
      { stream: anthropic.message([anthropic.textBlock(0, ['recovered'])]) },
    );
    expect((await events(request('anthropic', an)))[0]).toEqual({ type: 'text', text: 'recovered' });
    expect(chatRequests(an)).toHaveLength(2);
  });

  it('spends one budget of retries across the SDK’s and its own (an error event, then 429s)', async () => {
    an.reply(
      { stream: [anthropic.messageStart(10), anthropic.streamError('overloaded_error', 'Overloaded')] },
      anthropic.rateLimited('0'),
      anthropic.rateLimited('0'),
      { stream: anthropic.message([anthropic.textBlock(0, ['one request too many'])]) },
    );
    const { error } = await failing(request('anthropic', an));
    expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(chatRequests(an)).toHaveLength(1 + OPTIONS.retry.attempts);
    await events(request('anthropic', an)); // the answer left in the queue: the next turn works
  });

  it('calls an unknown model (404) provider_bad_request in the provider’s words', async () => {
    an.reply(anthropic.error(404, 'not_found_error', 'model: claude-9'));
    const { error } = await failing(request('anthropic', an, { model: 'claude-9' }));
    expect(error).toMatchObject({ code: 'provider_bad_request', status: 404 });
    expect(error.message).toBe('the provider refused the request (HTTP 404): model: claude-9');
  });

  it('ends with the typed error of an error event after content, keeping what came before', async () => {
    an.reply({
      stream: [
        anthropic.messageStart(10),
        ...anthropic.textBlock(0, ['Half a sen']).slice(0, 2),
        anthropic.streamError('overloaded_error', 'Overloaded'),
      ],
    });
    const { seen, error } = await failing(request('anthropic', an));
    expect(seen).toEqual([{ type: 'text', text: 'Half a sen' }]);
    expect(error.code).toBe('rate_limited');
    expect(chatRequests(an)).toHaveLength(1);
  });

  it('calls a refused key provider_auth', async () => {
    const { error } = await failing(request('anthropic', an, { apiKey: 'sk-ant-wrong' }));
    expect(error).toMatchObject({ code: 'provider_auth', status: 401 });
    expect(chatRequests(an)).toHaveLength(1);
  });

  it('calls a connection cut mid-answer provider_unavailable, and a stream ended without message_stop provider_protocol', async () => {
    an.reply({ stream: [anthropic.messageStart(10), ...anthropic.textBlock(0, ['cut'])], cut: true });
    expect((await failing(request('anthropic', an))).error.code).toBe('provider_unavailable');
    an.reply({ stream: [anthropic.messageStart(10), ...anthropic.textBlock(0, ['ended'])] });
    expect((await failing(request('anthropic', an))).error.code).toBe('provider_protocol');
    expect(chatRequests(an)).toHaveLength(2); // text had been streamed both times: neither is retried
  });

  it('tests a provider with x-api-key and anthropic-version on GET /v1/models', async () => {
    const conn = { kind: 'anthropic' as const, baseUrl: an.baseUrl, apiKey: an.apiKey };
    await expect(client.testProvider(conn)).resolves.toEqual({ ok: true, models: ['claude-sonnet-4-20250514'] });
    const sent = an.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/v1/models?limit=1000' });
    expect(sent.headers).toMatchObject({ 'x-api-key': an.apiKey, 'anthropic-version': '2023-06-01' });
    an.replyModels(anthropic.overloaded());
    await expect(client.testProvider(conn)).resolves.toMatchObject({ ok: false, error: 'rate_limited' });
  });
});

describe('a stream the caller stops, and a provider that goes quiet or away', () => {
  beforeEach(() => oa.requests.splice(0));

  it('a cancelled turn ends with the caller’s reason and closes the connection', async () => {
    oa.reply({ stream: [openai.chunk({ role: 'assistant', content: 'first' })], hang: true });
    const controller = new AbortController();
    const reason = new Error('the user stopped the turn');
    const seen: ChatEvent[] = [];
    const run = (async () => {
      for await (const e of client.streamChat(request('openai_compatible', oa, { signal: controller.signal }))) {
        seen.push(e);
        controller.abort(reason);
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(seen).toEqual([{ type: 'text', text: 'first' }]);
    await expect(chatRequests(oa)[0]!.ended).resolves.toBe('closed early');
  });

  it('a consumer that stops reading closes the connection', async () => {
    oa.reply({ stream: [openai.chunk({ role: 'assistant', content: 'enough' })], hang: true });
    for await (const e of client.streamChat(request('openai_compatible', oa))) if (e.type === 'text') break;
    await expect(chatRequests(oa)[0]!.ended).resolves.toBe('closed early');
  });

  it('a provider silent past the idle timeout is provider_unavailable', async () => {
    const impatient = createAiClient({ ...OPTIONS, idleTimeoutMs: 300 });
    an.reply({
      stream: [anthropic.messageStart(10), ...anthropic.textBlock(0, ['then nothing']).slice(0, 2)],
      hang: true,
    });
    const seen: ChatEvent[] = [];
    const error = await (async () => {
      for await (const e of impatient.streamChat(request('anthropic', an))) seen.push(e);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ type: 'text', text: 'then nothing' }]);
    expect(error).toMatchObject({ code: 'provider_unavailable', message: expect.stringMatching(/silent for 0\.3 s/) });
  });

  it('a provider that refuses connections is provider_unavailable', async () => {
    const gone = await startOpenAiDouble();
    const baseUrl = gone.baseUrl;
    await gone.close();
    const { error } = await failing({ ...request('openai_compatible', oa), baseUrl });
    expect(error).toMatchObject({
      code: 'provider_unavailable',
      message: expect.stringMatching(/refused the connection/),
    });
  });
});

describe('what an answer may be', () => {
  it('refuses an answer past the size bound, an endless line included, as a protocol error', async () => {
    const bounded = createAiClient({ ...OPTIONS, idleTimeoutMs: 3000, maxStreamBytes: 1024 * 1024 });
    const endless = `data: {"choices":[{"index":0,"delta":{"content":"${'x'.repeat(1536 * 1024)}`;
    oa.reply({ stream: [openai.chunk({ role: 'assistant', content: '' }), endless], hang: true });
    const { error } = await failing(request('openai_compatible', oa), bounded);
    expect(error).toMatchObject({ code: 'provider_protocol', message: "the provider's answer passed 1 MiB" });
  });
});

describe('where the adapters may connect', () => {
  it('refuses a provider on loopback unless private providers are allowed, before sending anything', async () => {
    const strict = createAiClient({ ...OPTIONS, allowPrivate: false });
    oa.requests.splice(0);
    await expect(
      strict.testProvider({ kind: 'openai_compatible', baseUrl: oa.baseUrl, apiKey: oa.apiKey }),
    ).resolves.toMatchObject({
      ok: false,
      error: 'provider_address_refused',
      message: expect.stringMatching(/loopback.*ALLOW_PRIVATE_AI_PROVIDERS/),
    });
    expect(oa.requests).toHaveLength(0);
  });

  it('refuses a model call to loopback as well, before the SDK sends anything', async () => {
    const strict = createAiClient({ ...OPTIONS, allowPrivate: false });
    oa.requests.splice(0);
    const { error } = await failing(request('openai_compatible', oa), strict);
    expect(error).toMatchObject({ code: 'provider_address_refused', message: expect.stringMatching(/loopback/) });
    expect(oa.requests).toHaveLength(0);
  });

  it('connects where the guard looked: a name only our resolver knows reaches its checked address', async () => {
    const port = new URL(an.baseUrl).port;
    const asked: string[] = [];
    const pinned = createAiClient({
      ...OPTIONS,
      lookup: async (host) => {
        asked.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    an.requests.splice(0);
    an.reply({ stream: anthropic.message([anthropic.textBlock(0, ['pinned'])]) });
    const got = await events({ ...request('anthropic', an), baseUrl: `http://provider.invalid:${port}` }, pinned);
    expect(got[0]).toEqual({ type: 'text', text: 'pinned' });
    expect(asked).toEqual(['provider.invalid']);
    expect(an.requests[0]!.headers.host).toBe(`provider.invalid:${port}`);
  });

  it('refuses a name resolving to loopback, and to a metadata address even where private providers are allowed', async () => {
    const to = (address: string, allowPrivate: boolean) =>
      createAiClient({ ...OPTIONS, allowPrivate, lookup: async () => [{ address, family: 4 }] });
    const baseUrl = `http://provider.invalid:${new URL(oa.baseUrl).port}/v1`;
    oa.requests.splice(0);
    const loopback = await failing({ ...request('openai_compatible', oa), baseUrl }, to('127.0.0.1', false));
    expect(loopback.error).toMatchObject({
      code: 'provider_address_refused',
      message: expect.stringMatching(/loopback/),
    });
    const metadata = await failing({ ...request('openai_compatible', oa), baseUrl }, to('169.254.169.254', true));
    expect(metadata.error).toMatchObject({
      code: 'provider_address_refused',
      message: expect.stringMatching(/metadata/),
    });
    expect(oa.requests).toHaveLength(0);
  });

  it('follows no redirect: a provider that moved is a baseUrl to fix', async () => {
    const elsewhere = await startOpenAiDouble({ models: ['moved'] });
    try {
      oa.replyModels({ status: 307, json: {}, headers: { location: `${elsewhere.baseUrl}/models` } });
      await expect(
        client.testProvider({ kind: 'openai_compatible', baseUrl: oa.baseUrl, apiKey: oa.apiKey }),
      ).resolves.toMatchObject({
        ok: false,
        error: 'provider_bad_request',
        message: expect.stringMatching(/redirect/),
      });
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });
});
