/** The two wire protocols a provider may speak (docs/architecture.md, "AI builder"). */
export const PROVIDER_KINDS = ['openai_compatible', 'anthropic'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** Where and as whom a provider is called. The key is plain here: only the worker holds one, never a log. */
export interface ProviderConnection {
  kind: ProviderKind;
  /**
   * openai_compatible: the prefix every OpenAI SDK takes, version included (`https://api.openai.com/v1`);
   * anthropic: the API's root (`https://api.anthropic.com`), as Anthropic's SDKs take it.
   */
  baseUrl: string;
  apiKey: string;
}

/** A tool the model may call; `parameters` is the JSON Schema of its arguments object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A complete tool call: its arguments assembled from every chunk and parsed. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** The conversation in a provider-neutral form; each adapter writes it in its provider's shape. */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string; isError?: boolean };

export interface ChatRequest extends ProviderConnection {
  model: string;
  system?: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** Upper bound of the answer; Anthropic requires one, so its adapter has a default. */
  maxTokens?: number;
  signal?: AbortSignal;
}

/**
 * Why the model stopped: `tool_use` asks the caller to run the tool calls it sent and call again; `raw` is the
 * provider's own word (`stop`, `end_turn`, `length`, …).
 */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'other';

/**
 * What a streamed answer is made of, in order: text deltas and complete tool calls as they come, then one usage
 * (when the provider reported any), then exactly one stop, last.
 */
export type ChatEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'usage'; inputTokens: number; outputTokens: number }
  | { type: 'stop'; reason: StopReason; raw: string | null };
