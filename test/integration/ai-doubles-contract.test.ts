import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

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
 * The doubles are only as good as their likeness: here each provider's official SDK, which is written against the
 * real API, reads them. If a double drifts from what the SDK expects (framing, event names, error bodies), these
 * fail before the adapters' tests can pass on a protocol nobody speaks.
 */
let oa: ProviderDouble;
let an: ProviderDouble;
beforeAll(async () => {
  [oa, an] = await Promise.all([
    startOpenAiDouble({ models: ['gpt-4o-mini', 'o3-mini'] }),
    startAnthropicDouble({ models: ['claude-sonnet-4-20250514'] }),
  ]);
});
afterAll(async () => {
  await Promise.all([oa?.close(), an?.close()]);
});

describe('the OpenAI SDK reads the OpenAI double', () => {
  const sdk = () => new OpenAI({ apiKey: oa.apiKey, baseURL: oa.baseUrl, maxRetries: 0 });

  it('a streamed text answer with usage', async () => {
    oa.reply({ stream: splitInside(openai.text(['Hello ', 'wörld'], { usage: [9, 2] }), 'ö') });
    const stream = sdk().chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    });
    const done = await stream.finalChatCompletion();
    expect(done.choices[0]!.message.content).toBe('Hello wörld');
    expect(done.choices[0]!.finish_reason).toBe('stop');
    expect(done.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
  });

  it('tool calls assembled from fragments', async () => {
    oa.reply({
      stream: openai.toolCalls([
        { id: 'call_1', name: 'write_file', args: ['{"path":"index', '.html","content":"☕"}'] },
        { id: 'call_2', name: 'delete_file', args: ['{"path":"old.html"}'] },
      ]),
    });
    const done = await sdk()
      .chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .finalChatCompletion();
    const calls = done.choices[0]!.message.tool_calls!.map((c) =>
      c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : [],
    );
    expect(calls).toEqual([
      ['call_1', 'write_file', { path: 'index.html', content: '☕' }],
      ['call_2', 'delete_file', { path: 'old.html' }],
    ]);
  });

  it('a refused key, a rate limit with its retry-after, and the model list', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong', baseURL: oa.baseUrl, maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect((await wrong.models.list().catch((e: unknown) => e)) instanceof OpenAI.AuthenticationError).toBe(true);

    oa.reply(openai.rateLimited('3'));
    const limited = await sdk()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('3');

    const ids: string[] = [];
    for await (const m of sdk().models.list()) ids.push(m.id);
    expect(ids).toEqual(['gpt-4o-mini', 'o3-mini']);
  });
});

describe('the Anthropic SDK reads the Anthropic double', () => {
  const sdk = () => new Anthropic({ apiKey: an.apiKey, baseURL: an.baseUrl, maxRetries: 0 });
  const ask = {
    model: 'claude-sonnet-4-20250514',
    max_tokens: 1024,
    messages: [{ role: 'user' as const, content: 'hi' }],
  };

  it('a streamed message with text, a tool_use block, ping and an unknown event', async () => {
    const unknown = anthropic.event('content_block_annotation', { index: 0 });
    an.reply({
      stream: splitInside(
        anthropic.message(
          [
            [...anthropic.textBlock(0, ['Wri', 'ting']), unknown],
            anthropic.toolUseBlock(1, 'toolu_1', 'write_file', ['{"path": "a.html", ', '"content": "Grüße"}']),
          ],
          { stopReason: 'tool_use', usage: [30, 12] },
        ),
        'ü',
      ),
    });
    const message = await sdk().messages.stream(ask).finalMessage();
    expect(message.content).toEqual([
      { type: 'text', text: 'Writing' },
      { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: { path: 'a.html', content: 'Grüße' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 12 });
  });

  it('an error event in the middle of a stream', async () => {
    an.reply({
      stream: [
        anthropic.messageStart(5),
        ...anthropic.textBlock(0, ['Half']).slice(0, 2),
        anthropic.streamError('overloaded_error', 'Overloaded'),
      ],
    });
    const failed = await sdk()
      .messages.stream(ask)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Anthropic.APIError);
    expect(JSON.stringify((failed as InstanceType<typeof Anthropic.APIError>).error)).toContain('overloaded_error');
  });

  it('a refused key, an overload (529), and the model list', async () => {
    const wrong = new Anthropic({ apiKey: 'sk-ant-wrong', baseURL: an.baseUrl, maxRetries: 0 });
    expect(await wrong.messages.create(ask).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.AuthenticationError);

    an.reply(anthropic.overloaded());
    const overloaded = await sdk()
      .messages.create({ ...ask, stream: true })
      .catch((e: unknown) => e);
    expect(overloaded).toMatchObject({ status: 529, error: { type: 'error', error: { type: 'overloaded_error' } } });

    const ids: string[] = [];
    for await (const m of sdk().models.list()) ids.push(m.id);
    expect(ids).toEqual(['claude-sonnet-4-20250514']);
  });
});

/**
 * Why shared/ai assembles streams itself and reads some answers through its own code: what each SDK's own helpers
 * do with answers the providers (or the servers copying them) send. Each is a reason written in shared/ai; when
 * an SDK release changes one, its test here fails and the code it justifies can go.
 */
describe('where the SDKs’ own helpers fall short (the reasons shared/ai keeps its stream reading)', () => {
  const openAi = () => new OpenAI({ apiKey: oa.apiKey, baseURL: oa.baseUrl, maxRetries: 0, logLevel: 'off' });
  const claude = (maxRetries = 0) =>
    new Anthropic({ apiKey: an.apiKey, baseURL: an.baseUrl, maxRetries, logLevel: 'off' });
  const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };
  const claudeAsk = { model: 'claude-sonnet-4-20250514', max_tokens: 1024, messages: ask.messages };

  it('OpenAI: whole tool calls without an index (Gemini’s OpenAI endpoint) come out as no call at all', async () => {
    oa.reply({
      stream: variants.unindexedToolCalls([
        { id: 'call_1', path: 'a.html' },
        { id: 'call_2', path: 'b.html' },
      ]),
    });
    const done = await openAi().chat.completions.stream(ask).finalChatCompletion();
    expect(done.choices[0]!.message.tool_calls).toEqual([]);
  });

  it('OpenAI: a usage chunk with `choices: null` fails the stream', async () => {
    oa.reply({ stream: variants.usageWithNullChoices('ok', [7, 1]) });
    await expect(openAi().chat.completions.stream(ask).finalChatCompletion()).rejects.toThrow(/not iterable/);
  });

  it('Anthropic: a tool call cut by max_tokens reads as the smaller object its text spells', async () => {
    an.reply({
      stream: anthropic.message([variants.cutToolUse(0, 'toolu_1')], { stopReason: 'max_tokens' }),
    });
    const message = await claude().messages.stream(claudeAsk).finalMessage();
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: { path: 'index.html' } },
    ]);
  });

  it('Anthropic: events without their `event:` line (a proxy dropped them) are not seen at all', async () => {
    const writes = anthropic.message([anthropic.textBlock(0, ['still there'])]);
    an.reply({ stream: variants.withoutEventLines(writes) });
    await expect(claude().messages.stream(claudeAsk).finalMessage()).rejects.toThrow(/without sending any chunks/);
  });

  it('Anthropic: an overloaded_error event after a 200 is not retried, whatever maxRetries says', async () => {
    an.requests.splice(0);
    an.reply(
      { stream: [anthropic.messageStart(10), anthropic.ping, anthropic.streamError('overloaded_error', 'Overloaded')] },
      { stream: anthropic.message([anthropic.textBlock(0, ['never asked for'])]) },
    );
    await expect(claude(2).messages.stream(claudeAsk).finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
    expect(an.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    await claude().messages.stream(claudeAsk).finalMessage(); // the answer left in the queue
  });
});
