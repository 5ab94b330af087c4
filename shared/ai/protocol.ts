import { AiProviderError } from './errors';
import type { ProviderFetch } from './guard';
import type { ChatEvent, ChatRequest, ProviderConnection } from './types';

/** How one SDK call is made: over our guarded fetch, with the retries left of the call's budget. */
export interface SdkCall {
  fetch: ProviderFetch;
  maxRetries: number;
  /** The SDK's own timer for an answer's headers, set to our idle timeout: its default (10 min) could cut it short. */
  timeout: number;
  signal?: AbortSignal;
}

/**
 * What differs between two providers: which SDK carries the call, how a request is written in its shape, and how
 * its stream reads as ChatEvents. Transport, authentication, retries of an error answer, SSE framing and typed
 * errors are the SDK's.
 */
export interface ProviderAdapter {
  /** Names the provider in messages ("the OpenAI-compatible provider sent …"). */
  label: string;
  /**
   * Sends a chat request. Resolves once the provider accepted it (an error answer was retried by the SDK, then
   * thrown), with the answer's events; the stream throws for a reported error or a malformed answer.
   */
  chat(req: ChatRequest, call: SdkCall, defaults: { maxTokens: number }): Promise<AsyncIterable<ChatEvent>>;
  /** The body of the provider's model list (`GET …/models`), as text. */
  models(conn: ProviderConnection, call: SdkCall): Promise<string>;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const protocolError = (label: string, what: string) =>
  new AiProviderError('provider_protocol', `the ${label} ${what}`);

/**
 * A tool call's argument text as the object it must be. `undefined` when it is not (yet) valid JSON: a call cut
 * by the token limit is dropped by the caller, any other is a protocol error. Strict on purpose, unlike the SDKs'
 * own stream helpers, which read a cut call's text leniently as the smaller object it happens to spell.
 */
export function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    // Not JSON (yet): what that means is the caller's to say, from why the model stopped.
    return undefined;
  }
}

/**
 * The model IDs of a model-list body (`{data: [{id}, …]}` on both kinds); undefined when it is not one. Read here
 * rather than through the SDKs' pages, which call any answer without `data` an empty list: a baseUrl that leads
 * to a web page must not pass a provider test.
 */
export function modelIds(text: string): string[] | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: not a model list, which the caller says.
    return undefined;
  }
  if (!isRecord(body) || !Array.isArray(body.data)) return undefined;
  return body.data.flatMap((m) => (isRecord(m) && typeof m.id === 'string' ? [m.id] : []));
}

/**
 * Headers both SDKs add that describe this machine (OS, CPU, Node version) to whatever server baseUrl names: a
 * tenant's choice, so they are left out.
 */
export const QUIET_HEADERS = {
  'x-stainless-os': null,
  'x-stainless-arch': null,
  'x-stainless-runtime-version': null,
} as const;
