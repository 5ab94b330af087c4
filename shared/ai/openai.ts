import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';

import { isRecord, parseArguments, protocolError, type ProviderAdapter, QUIET_HEADERS, type SdkCall } from './protocol';
import type { ChatEvent, ChatMessage, ProviderConnection, StopReason } from './types';

const LABEL = 'OpenAI-compatible provider';

const STOP: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

function wireMessages(system: string | undefined, messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
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

/**
 * The SDK on our fetch. Organisation, project and admin key are set to none: the SDK would otherwise read them
 * from this process's environment and send them to whatever server baseUrl names.
 */
const sdk = (conn: ProviderConnection, call: SdkCall) =>
  new OpenAI({
    apiKey: conn.apiKey,
    adminAPIKey: null,
    organization: null,
    project: null,
    baseURL: conn.baseUrl,
    fetch: call.fetch,
    maxRetries: call.maxRetries,
    timeout: call.timeout,
    defaultHeaders: QUIET_HEADERS,
    // Failures reach the caller as typed errors; the SDK's own console lines would bypass the process logger.
    logLevel: 'off',
  });

interface PartialCall {
  id?: string;
  name: string;
  args: string;
}

/**
 * The chunks of a streamed chat completion as ChatEvents. The SDK frames and parses the chunks and throws for an
 * error object in the stream; the tool calls are assembled here, because the SDK's own assembler
 * (`chat.completions.stream()`) loses or refuses what servers copying the API send (test/integration/
 * ai-doubles-contract.test.ts shows each): whole calls without `index` (Gemini's OpenAI endpoint) come out as no
 * call at all, and a usage chunk with `choices: null` fails the stream.
 */
async function* events(stream: AsyncIterable<unknown>): AsyncGenerator<ChatEvent> {
  const calls = new Map<number, PartialCall>();
  let finish: string | undefined;
  let usage: ChatEvent | undefined;
  let toolCalls = 0;
  let lastIndex = -1;
  // A fragment without `index` and with a new id starts the next call; one without either continues the last.
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

  for await (const chunk of stream) {
    if (!isRecord(chunk)) throw protocolError(LABEL, 'sent a chunk that is not a JSON object');
    if (isRecord(chunk.usage))
      usage = {
        type: 'usage',
        inputTokens: Number(chunk.usage.prompt_tokens) || 0,
        outputTokens: Number(chunk.usage.completion_tokens) || 0,
      };
    // The usage chunk has `choices: []`, and some servers send `choices: null`.
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
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
  // The SDK ends the stream quietly at `[DONE]` and at a connection closed early alike: only a finish_reason
  // tells a whole answer from a cut one.
  if (finish === undefined) throw protocolError(LABEL, 'ended its stream before the model finished');
  yield* flush();
  if (usage) yield usage;
  const reason: StopReason = toolCalls > 0 && finish !== 'length' ? 'tool_use' : (STOP[finish] ?? 'other');
  yield { type: 'stop', reason, raw: finish };
}

/**
 * Chat completions with `stream: true` (platform.openai.com/docs/api-reference/chat-streaming), as OpenAI and the
 * servers that copy it (vLLM, Ollama, LiteLLM, OpenRouter…) speak it, through the official SDK.
 */
export const openAiAdapter: ProviderAdapter = {
  label: LABEL,

  async chat(req, call) {
    const body: ChatCompletionCreateParamsStreaming = {
      model: req.model,
      messages: wireMessages(req.system, req.messages),
      stream: true,
      // Without it, token usage is never streamed; with it, a last chunk carries usage and no choices.
      stream_options: { include_usage: true },
      ...(req.tools?.length
        ? {
            tools: req.tools.map((t) => ({
              type: 'function' as const,
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }
        : {}),
      ...(req.maxTokens === undefined ? {} : { max_tokens: req.maxTokens }),
    };
    const stream = await sdk(req, call).chat.completions.create(body, { signal: call.signal });
    return events(stream);
  },

  async models(conn, call) {
    const res = await sdk(conn, call).models.list({ signal: call.signal }).asResponse();
    return res.text();
  },
};
