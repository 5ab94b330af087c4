import { errorInStream, providerText } from './errors';
import { isRecord, parseArguments, protocolError, type ProviderProtocol } from './protocol';
import { parseData } from './sse';
import type { ChatEvent, ChatMessage, StopReason } from './types';

const LABEL = 'Anthropic provider';
/** The API version every Anthropic SDK pins; newer features are opted into with beta headers, not this. */
export const ANTHROPIC_VERSION = '2023-06-01';

const STOP: Record<string, StopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  refusal: 'refusal',
};

type Block = Record<string, unknown>;

/** `ping` is not here: like any event not listed, it is skipped unread. */
const KNOWN_EVENTS = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'error',
]);

/**
 * Anthropic wants strictly alternating roles, tool results inside a user message, and no empty text block; so
 * neighbouring messages of one role are merged into one list of content blocks.
 */
function wireMessages(messages: ChatMessage[]) {
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks: Block[] = [];
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

function typeInData(data: string): string {
  try {
    const value: unknown = JSON.parse(data);
    return isRecord(value) && typeof value.type === 'string' ? value.type : '';
  } catch {
    return '';
  }
}

const headers = (apiKey: string) => ({ 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION });
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Messages with `stream: true` (docs.anthropic.com/en/api/messages-streaming): named events message_start,
 * content_block_start/delta/stop per block (text, or tool_use whose input comes as `input_json_delta` pieces),
 * message_delta (stop_reason, usage), message_stop; `ping` anywhere; an `error` event may end any stream; event
 * types added later must be ignored.
 */
export const anthropicProtocol: ProviderProtocol = {
  label: LABEL,

  chat(req, defaults) {
    return {
      path: '/v1/messages',
      headers: headers(req.apiKey),
      body: {
        model: req.model,
        max_tokens: req.maxTokens ?? defaults.maxTokens,
        stream: true,
        ...(req.system ? { system: req.system } : {}),
        messages: wireMessages(req.messages),
        ...(req.tools?.length
          ? { tools: req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) }
          : {}),
      },
    };
  },

  models: (conn) => ({ path: '/v1/models?limit=1000', headers: headers(conn.apiKey) }),

  parseModels(json) {
    if (!isRecord(json) || !Array.isArray(json.data)) return undefined;
    return json.data.flatMap((m) => (isRecord(m) && typeof m.id === 'string' ? [m.id] : []));
  },

  errorDetail(json) {
    const error = isRecord(json) && isRecord(json.error) ? json.error : undefined;
    return {
      type: typeof error?.type === 'string' ? error.type : undefined,
      message: typeof error?.message === 'string' ? error.message : undefined,
    };
  },

  async *events(stream, apiKey): AsyncGenerator<ChatEvent> {
    const blocks = new Map<number, { kind: 'text' | 'tool_use' | 'other'; id?: string; name?: string; json: string }>();
    let inputTokens = 0;
    let outputTokens = 0;
    let sawUsage = false;
    let stop: string | undefined;
    let stopped = false;
    let cutToolCall: string | undefined;

    for await (const message of stream) {
      // Every event names itself twice (the SSE event and data.type); unknown ones are skipped unread. A proxy
      // that drops the `event:` line leaves data.type to go by.
      const type = message.event ?? typeInData(message.data);
      if (!KNOWN_EVENTS.has(type)) continue;
      const data = parseData(message, `the ${LABEL}`);
      if (!isRecord(data)) throw protocolError(LABEL, `sent a ${type} event that is not a JSON object`);

      if (type === 'error') {
        const e = isRecord(data.error) ? data.error : {};
        throw errorInStream({
          type: typeof e.type === 'string' ? e.type : undefined,
          message: providerText(typeof e.message === 'string' ? e.message : undefined, apiKey),
        });
      }
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
  },
};
