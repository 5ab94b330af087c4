import { errorInStream, providerText } from './errors';
import { isRecord, parseArguments, protocolError, type ProviderProtocol } from './protocol';
import { parseData } from './sse';
import type { ChatEvent, ChatMessage, StopReason } from './types';

const LABEL = 'OpenAI-compatible provider';

const STOP: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

function wireMessages(system: string | undefined, messages: ChatMessage[]) {
  const out: Record<string, unknown>[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'tool') out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
    else if (m.toolCalls?.length)
      out.push({
        role: 'assistant',
        // The API wants null, not "", beside tool calls that came without text.
        content: m.content === '' ? null : m.content,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        })),
      });
    else out.push({ role: 'assistant', content: m.content });
  }
  return out;
}

interface PartialCall {
  id?: string;
  name: string;
  args: string;
}

/**
 * Chat completions with `stream: true` (platform.openai.com/docs/api-reference/chat-streaming), as OpenAI and the
 * servers that copy it (vLLM, Ollama, LiteLLM, OpenRouter…) send it: `data:` lines of chunks, `data: [DONE]` last.
 * A tool call arrives as fragments keyed by `index`: id and name first, then its argument text in pieces.
 */
export const openAiProtocol: ProviderProtocol = {
  label: LABEL,

  chat(req) {
    return {
      path: '/chat/completions',
      headers: { authorization: `Bearer ${req.apiKey}` },
      body: {
        model: req.model,
        messages: wireMessages(req.system, req.messages),
        stream: true,
        // Without it, token usage is never streamed; with it, a last chunk carries usage and no choices.
        stream_options: { include_usage: true },
        ...(req.tools?.length
          ? {
              tools: req.tools.map((t) => ({
                type: 'function',
                function: { name: t.name, description: t.description, parameters: t.parameters },
              })),
            }
          : {}),
        ...(req.maxTokens === undefined ? {} : { max_tokens: req.maxTokens }),
      },
    };
  },

  models: (conn) => ({ path: '/models', headers: { authorization: `Bearer ${conn.apiKey}` } }),

  parseModels(json) {
    if (!isRecord(json) || !Array.isArray(json.data)) return undefined;
    return json.data.flatMap((m) => (isRecord(m) && typeof m.id === 'string' ? [m.id] : []));
  },

  errorDetail(json) {
    const error = isRecord(json) && isRecord(json.error) ? json.error : undefined;
    return {
      type: typeof error?.type === 'string' ? error.type : typeof error?.code === 'string' ? error.code : undefined,
      message: typeof error?.message === 'string' ? error.message : undefined,
    };
  },

  async *events(stream, apiKey): AsyncGenerator<ChatEvent> {
    const calls = new Map<number, PartialCall>();
    let finish: string | undefined;
    let usage: ChatEvent | undefined;
    let done = false;
    let toolCalls = 0;
    let lastIndex = -1;
    // Some servers (Gemini's OpenAI endpoint among them) leave `index` out and send each call whole: a fragment
    // with a new id starts the next call, one without continues the last.
    const unindexed = (id: unknown): number => {
      const last = calls.get(lastIndex);
      if (lastIndex < 0 || (typeof id === 'string' && id && last?.id !== undefined && last.id !== id))
        return lastIndex + 1;
      return lastIndex;
    };

    const flush = function* (): Generator<ChatEvent> {
      for (const index of [...calls.keys()].sort((a, b) => a - b)) {
        const call = calls.get(index)!;
        calls.delete(index);
        const args = parseArguments(call.args);
        if (args === undefined) {
          if (finish === 'length') continue;
          throw protocolError(
            LABEL,
            `sent arguments for the tool ${call.name || '(unnamed)'} that are not a JSON object`,
          );
        }
        if (!call.name) throw protocolError(LABEL, 'sent a tool call without a name');
        toolCalls++;
        yield { type: 'tool_call', call: { id: call.id ?? `call_${index}`, name: call.name, arguments: args } };
      }
    };

    for await (const message of stream) {
      if (message.data.trim() === '[DONE]') {
        done = true;
        break;
      }
      const chunk = parseData(message, `the ${LABEL}`);
      if (!isRecord(chunk)) throw protocolError(LABEL, 'sent a chunk that is not a JSON object');
      if (isRecord(chunk.error)) {
        const e = chunk.error;
        throw errorInStream({
          type: typeof e.type === 'string' ? e.type : undefined,
          code: typeof e.code === 'string' ? e.code : undefined,
          message: providerText(typeof e.message === 'string' ? e.message : undefined, apiKey),
        });
      }
      if (isRecord(chunk.usage))
        usage = {
          type: 'usage',
          inputTokens: Number(chunk.usage.prompt_tokens) || 0,
          outputTokens: Number(chunk.usage.completion_tokens) || 0,
        };
      // The usage chunk has `choices: []`, and some servers send `choices: null`.
      const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
      for (const choice of choices) {
        if (!isRecord(choice) || (choice.index !== undefined && choice.index !== 0)) continue;
        const delta = isRecord(choice.delta) ? choice.delta : {};
        if (typeof delta.content === 'string' && delta.content !== '') yield { type: 'text', text: delta.content };
        for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
          if (!isRecord(fragment)) continue;
          const index = typeof fragment.index === 'number' ? fragment.index : unindexed(fragment.id);
          lastIndex = index;
          const call = calls.get(index) ?? { name: '', args: '' };
          calls.set(index, call);
          if (typeof fragment.id === 'string' && fragment.id) call.id = fragment.id;
          const fn = isRecord(fragment.function) ? fragment.function : {};
          // Some servers repeat the name in every fragment: it is set once, never concatenated.
          if (typeof fn.name === 'string' && fn.name && !call.name) call.name = fn.name;
          if (typeof fn.arguments === 'string') call.args += fn.arguments;
        }
        if (typeof choice.finish_reason === 'string' && choice.finish_reason) {
          finish = choice.finish_reason;
          yield* flush();
        }
      }
    }
    if (!done && finish === undefined) throw protocolError(LABEL, 'ended its stream before the model finished');
    yield* flush();
    if (usage) yield usage;
    const reason: StopReason =
      toolCalls > 0 && finish !== 'length' ? 'tool_use' : finish === undefined ? 'other' : (STOP[finish] ?? 'other');
    yield { type: 'stop', reason, raw: finish ?? null };
  },
};
