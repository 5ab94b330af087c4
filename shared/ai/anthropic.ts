import Anthropic, { type Middleware } from '@anthropic-ai/sdk';
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';

import { isRecord, parseArguments, protocolError, type ProviderAdapter, QUIET_HEADERS, type SdkCall } from './protocol';
import type { ChatEvent, ChatMessage, ProviderConnection, StopReason } from './types';

const LABEL = 'Anthropic provider';
/**
 * The API version we send, in place of the SDK's own (2026-10-21): an `anthropic` provider is any server that
 * speaks the Messages API, and this is the version they were written against and that Anthropic's API has
 * accepted since 2023. Nothing we send or read differs between the two.
 */
export const ANTHROPIC_VERSION = '2023-06-01';

const STOP: Record<string, StopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  refusal: 'refusal',
};

/** `ping` is not here (the SDK drops it), nor any type added later: those are skipped unread. */
const KNOWN_EVENTS = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
]);

/**
 * Anthropic wants strictly alternating roles, tool results inside a user message, and no empty text block; so
 * neighbouring messages of one role are merged into one list of content blocks.
 */
function wireMessages(messages: ChatMessage[]): MessageParam[] {
  const out: (MessageParam & { content: ContentBlockParam[] })[] = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks: ContentBlockParam[] = [];
    if (m.role === 'tool')
      blocks.push({
        type: 'tool_result',
        tool_use_id: m.toolCallId,
        content: m.content,
        ...(m.isError ? { is_error: true } : {}),
      });
    else {
      if (m.content !== '') blocks.push({ type: 'text', text: m.content });
      if (m.role === 'assistant')
        for (const c of m.toolCalls ?? [])
          blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
    }
    if (blocks.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

function typeInData(data: string): string | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return isRecord(value) && typeof value.type === 'string' ? value.type : undefined;
  } catch {
    // Not JSON: the SDK reads it next and fails the stream with that.
    return undefined;
  }
}

/**
 * Every event names itself twice (the SSE `event:` line and data.type), and the SDK dispatches by the first
 * alone: behind a proxy that drops `event:` lines, it would see nothing (test/integration/ai-doubles-contract.
 * test.ts shows it). So an answer's events are read with the SDK's own SSE reader and written again, each with
 * its name, the one in its data where the line was missing.
 */
const nameEvents: Middleware = async (request, next) => {
  const res = await next(request);
  if (!res.ok || !res.body || !res.headers.get('content-type')?.includes('text/event-stream')) return res;
  const encoder = new TextEncoder();
  const events = Stream.rawEvents(res);
  const body = new ReadableStream<Uint8Array>({
    async pull(out) {
      const next = await events.next();
      if (next.done) return out.close();
      const { event, data } = next.value;
      const name = event ?? typeInData(data);
      const lines = data.split('\n').map((line) => `data: ${line}\n`);
      out.enqueue(encoder.encode(`${name ? `event: ${name}\n` : ''}${lines.join('')}\n`));
    },
    async cancel() {
      await events.return();
    },
  });
  return new Response(body, res);
};

/**
 * The SDK on our fetch. The key goes as `x-api-key` with the version above, as the Messages API has always taken
 * them, rather than the SDK's `Authorization: Bearer` (new with its API version). Tracing is off: neither our
 * spans nor their context are a provider's business.
 */
const sdk = (conn: ProviderConnection, call: SdkCall) =>
  new Anthropic({
    apiKey: conn.apiKey,
    baseURL: conn.baseUrl,
    fetch: call.fetch,
    maxRetries: call.maxRetries,
    timeout: call.timeout,
    defaultHeaders: {
      ...QUIET_HEADERS,
      authorization: null,
      'x-api-key': conn.apiKey,
      'anthropic-version': ANTHROPIC_VERSION,
    },
    middleware: [nameEvents],
    openTelemetry: { traces: false, propagation: false },
    // Failures reach the caller as typed errors; the SDK's own console lines would bypass the process logger.
    logLevel: 'off',
  });

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * The events of a streamed message (docs.anthropic.com/en/api/messages-streaming) as ChatEvents. The SDK frames
 * and parses them, drops `ping` and throws for an `error` event; the blocks are assembled here, because the
 * SDK's own assembler (`messages.stream()`) reads a tool call's input leniently: one cut by max_tokens comes out
 * as the smaller object its text happens to spell (a write_file without its content), where it must be dropped.
 */
async function* events(stream: AsyncIterable<unknown>): AsyncGenerator<ChatEvent> {
  const blocks = new Map<number, { kind: 'text' | 'tool_use' | 'other'; id?: string; name?: string; json: string }>();
  let inputTokens = 0;
  let outputTokens = 0;
  let sawUsage = false;
  let stop: string | undefined;
  let stopped = false;
  let cutToolCall: string | undefined;

  for await (const data of stream) {
    if (!isRecord(data)) throw protocolError(LABEL, 'sent an event that is not a JSON object');
    const type = typeof data.type === 'string' ? data.type : '';
    if (!KNOWN_EVENTS.has(type)) continue;
    if (type === 'message_start') {
      const usage = isRecord(data.message) && isRecord(data.message.usage) ? data.message.usage : undefined;
      if (usage) {
        sawUsage = true;
        // Cached prompt tokens are counted apart from input_tokens; together they are what the prompt cost.
        inputTokens =
          count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
        outputTokens = count(usage.output_tokens);
      }
      continue;
    }
    if (type === 'message_delta') {
      if (isRecord(data.delta) && typeof data.delta.stop_reason === 'string') stop = data.delta.stop_reason;
      if (isRecord(data.usage) && typeof data.usage.output_tokens === 'number') {
        sawUsage = true;
        outputTokens = data.usage.output_tokens;
      }
      continue;
    }
    if (type === 'message_stop') {
      stopped = true;
      break;
    }

    const index = data.index;
    if (typeof index !== 'number') throw protocolError(LABEL, `sent a ${type} event without a block index`);
    if (type === 'content_block_start') {
      const b = isRecord(data.content_block) ? data.content_block : {};
      if (b.type === 'text') {
        blocks.set(index, { kind: 'text', json: '' });
        if (typeof b.text === 'string' && b.text !== '') yield { type: 'text', text: b.text };
      } else if (b.type === 'tool_use') {
        if (typeof b.name !== 'string' || !b.name) throw protocolError(LABEL, 'sent a tool_use block without a name');
        blocks.set(index, {
          kind: 'tool_use',
          id: typeof b.id === 'string' ? b.id : undefined,
          name: b.name,
          json: '',
        });
      } else blocks.set(index, { kind: 'other', json: '' });
      continue;
    }
    const block = blocks.get(index);
    if (!block) throw protocolError(LABEL, `sent ${type} for block ${index}, which never started`);
    if (type === 'content_block_delta') {
      const d = isRecord(data.delta) ? data.delta : {};
      if (block.kind === 'text' && d.type === 'text_delta' && typeof d.text === 'string' && d.text !== '')
        yield { type: 'text', text: d.text };
      else if (block.kind === 'tool_use' && d.type === 'input_json_delta' && typeof d.partial_json === 'string')
        block.json += d.partial_json;
      continue;
    }
    // content_block_stop: a tool call is complete only here.
    blocks.delete(index);
    if (block.kind !== 'tool_use') continue;
    const args = parseArguments(block.json);
    if (args === undefined) {
      // Cut by max_tokens mid-input, which message_delta says next; anything else is a broken stream.
      cutToolCall = block.name;
      continue;
    }
    yield { type: 'tool_call', call: { id: block.id ?? `toolu_${index}`, name: block.name!, arguments: args } };
  }
  if (!stopped) throw protocolError(LABEL, 'ended its stream before message_stop');
  if (cutToolCall !== undefined && stop !== 'max_tokens')
    throw protocolError(LABEL, `sent input for the tool ${cutToolCall} that is not a JSON object`);
  if (sawUsage) yield { type: 'usage', inputTokens, outputTokens };
  yield { type: 'stop', reason: stop === undefined ? 'other' : (STOP[stop] ?? 'other'), raw: stop ?? null };
}

/** Messages with `stream: true`, through the official SDK. */
export const anthropicAdapter: ProviderAdapter = {
  label: LABEL,

  async chat(req, call, defaults) {
    const body: MessageCreateParamsStreaming = {
      model: req.model,
      max_tokens: req.maxTokens ?? defaults.maxTokens,
      stream: true,
      ...(req.system ? { system: req.system } : {}),
      messages: wireMessages(req.messages),
      ...(req.tools?.length
        ? {
            tools: req.tools.map((t): Tool => ({
              name: t.name,
              description: t.description,
              input_schema: t.parameters as Tool['input_schema'],
            })),
          }
        : {}),
    };
    const stream = await sdk(req, call).messages.create(body, { signal: call.signal });
    return events(stream);
  },

  async models(conn, call) {
    const res = await sdk(conn, call).models.list({ limit: 1000 }, { signal: call.signal }).asResponse();
    return res.text();
  },
};
