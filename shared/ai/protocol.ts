import { AiProviderError } from './errors';
import type { SseMessage } from './sse';
import type { ChatEvent, ChatRequest, ProviderConnection } from './types';

/** One HTTP request in a provider's shape; the client adds the transport (pinning, timeouts, retries). */
export interface WireRequest {
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** What differs between two providers: how a request is written and how their stream and errors read. */
export interface ProviderProtocol {
  /** Names the provider in messages ("the OpenAI-compatible provider sent …"). */
  label: string;
  chat(req: ChatRequest, defaults: { maxTokens: number }): WireRequest;
  models(conn: ProviderConnection): WireRequest;
  /** Model IDs of a model-list answer; undefined when it is not one. */
  parseModels(json: unknown): string[] | undefined;
  /** The provider's error type and message in an error answer's JSON. */
  errorDetail(json: unknown): { type?: string; message?: string };
  /** The stream's events as ChatEvents; throws AiProviderError for a reported error or a malformed stream. */
  events(stream: AsyncIterable<SseMessage>, apiKey: string): AsyncGenerator<ChatEvent>;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const protocolError = (label: string, what: string) =>
  new AiProviderError('provider_protocol', `the ${label} ${what}`);

/**
 * A tool call's argument text as the object it must be. `undefined` when it is not (yet) valid JSON: a call cut
 * by the token limit is dropped by the caller, any other is a protocol error.
 */
export function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
