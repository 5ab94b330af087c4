import type { Config } from '../config';
import { anthropicAdapter } from './anthropic';
import { type AiErrorCode, AiProviderError } from './errors';
import { providerFailure } from './failures';
import { guardedFetch, type HttpOptions } from './guard';
import { openAiAdapter } from './openai';
import { modelIds, protocolError, type ProviderAdapter } from './protocol';
import type { ChatEvent, ChatRequest, ProviderConnection, ProviderKind } from './types';

const ADAPTERS: Record<ProviderKind, ProviderAdapter> = {
  openai_compatible: openAiAdapter,
  anthropic: anthropicAdapter,
};

export interface AiClientOptions extends HttpOptions {
  retry: {
    /**
     * Requests after the first, for a rate limit, an overload, a 5xx or a lost connection before any event. The
     * model step runs once (workflows/builder-turn: a retry after streaming would show the text twice), so these
     * are the only retries a model call gets: the SDK's `maxRetries` for an error answer, and ours for an error
     * the stream reports before its first event, from one budget.
     */
    attempts: number;
    /** Longest wait before one retry; a provider asking for longer ends the call at once. */
    maxDelayMs: number;
  };
  /** max_tokens sent to Anthropic (which requires one) when the request names none. */
  defaultMaxTokens?: number;
  /** One answer larger than this is refused as a protocol error. */
  maxStreamBytes?: number;
}

/** The client's options from the process configuration. */
export function aiClientOptionsFrom(
  cfg: Pick<Config, 'ALLOW_PRIVATE_AI_PROVIDERS' | 'AI_RETRY_ATTEMPTS' | 'AI_RETRY_MAX_DELAY_S' | 'AI_IDLE_TIMEOUT_S'>,
): AiClientOptions {
  return {
    allowPrivate: cfg.ALLOW_PRIVATE_AI_PROVIDERS,
    idleTimeoutMs: cfg.AI_IDLE_TIMEOUT_S * 1000,
    retry: { attempts: cfg.AI_RETRY_ATTEMPTS, maxDelayMs: cfg.AI_RETRY_MAX_DELAY_S * 1000 },
  };
}

export type TestResult = { ok: true; models: string[] } | { ok: false; error: AiErrorCode; message: string };

/** The SDKs' own first backoff, doubled on each attempt: ours for an error inside a stream waits alike. */
const FIRST_BACKOFF_MS = 500;

/** Waits `ms`, or rejects with the caller's reason as soon as it cancels. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Model calls through the providers' official SDKs (openai, @anthropic-ai/sdk). Every call connects only where
 * net-guard allows (a private address needs `allowPrivate`), over a fetch of ours pinned to the checked address
 * (guard.ts), and the key travels in a header only: no error, event or log line carries it.
 */
export function createAiClient(options: AiClientOptions) {
  const maxBytes = options.maxStreamBytes ?? 32 * 1024 * 1024;
  const maxTokens = options.defaultMaxTokens ?? 8192;
  const budget = options.retry.attempts + 1;

  /** A fetch for one call to `conn`, and how to read what went wrong on it. */
  async function open(conn: ProviderConnection, signal: AbortSignal | undefined) {
    const adapter = ADAPTERS[conn.kind];
    const fetch = await guardedFetch(conn.baseUrl, { ...options, maxBytes, maxRetryDelayMs: options.retry.maxDelayMs });
    const ctx = {
      label: adapter.label,
      apiKey: conn.apiKey,
      host: new URL(conn.baseUrl).host,
      idleTimeoutMs: options.idleTimeoutMs,
    };
    // The caller's cancellation wins over whatever error it caused (the SDKs end a cancelled stream quietly).
    const failure = (err: unknown) => (signal?.aborted ? signal.reason : providerFailure(err, ctx));
    return { adapter, fetch, failure };
  }

  /** The provider's model IDs (`GET …/models` on both kinds); one attempt, its AiProviderError otherwise. */
  async function listModels(conn: ProviderConnection, signal?: AbortSignal): Promise<string[]> {
    const { adapter, fetch, failure } = await open(conn, signal);
    try {
      const call = { fetch: fetch.fetch, maxRetries: 0, timeout: options.idleTimeoutMs, signal };
      const models = modelIds(await adapter.models(conn, call));
      if (!models) throw protocolError(adapter.label, 'answered the model list with something that is not one');
      return models;
    } catch (err) {
      throw failure(err);
    } finally {
      await fetch.close();
    }
  }

  return {
    /**
     * One model answer as a stream of events (text deltas, complete tool calls, usage, stop). A rate limit,
     * overload, 5xx or lost connection is retried while nothing has been streamed yet — a retry after the first
     * event would repeat text the caller already has — up to `retry.attempts` requests after the first: the SDK
     * retries an error answer; an error the stream reports before its first event (Anthropic's overloaded_error
     * after a 200, a connection cut) the SDK cannot retry, so it is retried here from what is left.
     */
    async *streamChat(req: ChatRequest): AsyncGenerator<ChatEvent> {
      const { adapter, fetch, failure } = await open(req, req.signal);
      try {
        for (let retry = 0; ; retry++) {
          const maxRetries = budget - 1 - fetch.sent();
          const call = { fetch: fetch.fetch, maxRetries, timeout: options.idleTimeoutMs, signal: req.signal };
          let events: AsyncIterable<ChatEvent>;
          try {
            events = await adapter.chat(req, call, { maxTokens });
          } catch (err) {
            // An error answer, which the SDK has retried as far as the budget allows.
            throw failure(err);
          }
          let streamed = false;
          try {
            for await (const event of events) {
              streamed = true;
              yield event;
            }
          } catch (thrown) {
            const err = failure(thrown);
            if (streamed || !(err instanceof AiProviderError) || !err.retriable || fetch.sent() >= budget) throw err;
            const backoff = Math.min(options.retry.maxDelayMs, FIRST_BACKOFF_MS * 2 ** retry);
            await sleep(backoff / 2 + Math.random() * (backoff / 2), req.signal);
            continue;
          }
          if (req.signal?.aborted) throw req.signal.reason;
          return;
        }
      } finally {
        await fetch.close();
      }
    },

    listModels,

    /** A real call to the provider's model list, reported as success or the class of its failure. */
    async testProvider(conn: ProviderConnection, signal?: AbortSignal): Promise<TestResult> {
      try {
        return { ok: true, models: await listModels(conn, signal) };
      } catch (err) {
        if (err instanceof AiProviderError) return { ok: false, error: err.code, message: err.message };
        throw err;
      }
    },
  };
}

export type AiClient = ReturnType<typeof createAiClient>;
