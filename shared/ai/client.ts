import type { Config } from '../config';
import { anthropicProtocol } from './anthropic';
import { type AiErrorCode, AiProviderError, errorForStatus, providerText, retryAfterMs } from './errors';
import { type HttpOptions, type ProviderResponse, readJson, send } from './http';
import { openAiProtocol } from './openai';
import { protocolError, type ProviderProtocol, type WireRequest } from './protocol';
import { readSse } from './sse';
import type { ChatEvent, ChatRequest, ProviderConnection, ProviderKind } from './types';

const PROTOCOLS: Record<ProviderKind, ProviderProtocol> = {
  openai_compatible: openAiProtocol,
  anthropic: anthropicProtocol,
};

export interface AiClientOptions extends HttpOptions {
  retry: {
    /** Attempts after the first, for a rate limit, an overload, a 5xx or a lost connection before any event. */
    attempts: number;
    /** Longest wait before one retry; a provider asking for longer ends the call at once. */
    maxDelayMs: number;
    /** First backoff when the provider did not say how long to wait; doubled on each attempt. */
    baseDelayMs?: number;
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

const endpoint = (baseUrl: string, path: string) => new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);

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
 * Model calls on the providers' own HTTP APIs. Every call connects only where net-guard allows (a private
 * address needs `allowPrivate`), and the key travels in a header only: no error, event or log line carries it.
 */
export function createAiClient(options: AiClientOptions) {
  const maxBytes = options.maxStreamBytes ?? 32 * 1024 * 1024;
  const maxTokens = options.defaultMaxTokens ?? 8192;
  const baseDelayMs = options.retry.baseDelayMs ?? 500;

  async function failure(protocol: ProviderProtocol, res: ProviderResponse, apiKey: string): Promise<AiProviderError> {
    const detail = protocol.errorDetail(await readJson(res));
    return errorForStatus(res.status, {
      type: detail.type,
      message: providerText(detail.message, apiKey),
      retryAfterMs: retryAfterMs(res.headers),
    });
  }

  const request = (wire: WireRequest, extra: Record<string, string>) => ({
    headers: { ...wire.headers, ...extra },
    ...(wire.body === undefined ? {} : { body: JSON.stringify(wire.body) }),
  });

  async function* attempt(protocol: ProviderProtocol, req: ChatRequest): AsyncGenerator<ChatEvent> {
    const wire = protocol.chat(req, { maxTokens });
    const init = request(wire, { 'content-type': 'application/json', accept: 'text/event-stream' });
    const res = await send(endpoint(req.baseUrl, wire.path), { method: 'POST', ...init, signal: req.signal }, options);
    try {
      if (res.status < 200 || res.status > 299) throw await failure(protocol, res, req.apiKey);
      const type = res.headers['content-type'] ?? '';
      if (!type.includes('text/event-stream'))
        throw protocolError(protocol.label, `answered ${type || 'without a content type'} instead of an event stream`);
      yield* protocol.events(readSse(res.body, { maxBytes }), req.apiKey);
    } finally {
      await res.close();
    }
  }

  /** How long to wait before attempt `n + 1`, or undefined when the provider asks for longer than we wait. */
  function delayBefore(err: AiProviderError, n: number): number | undefined {
    if (err.retryAfterMs !== undefined)
      return err.retryAfterMs > options.retry.maxDelayMs ? undefined : err.retryAfterMs;
    const backoff = Math.min(options.retry.maxDelayMs, baseDelayMs * 2 ** (n - 1));
    return backoff / 2 + Math.random() * (backoff / 2);
  }

  /** The provider's model IDs (`GET /v1/models` on both kinds); one attempt, its AiProviderError otherwise. */
  async function listModels(conn: ProviderConnection, signal?: AbortSignal): Promise<string[]> {
    const protocol = PROTOCOLS[conn.kind];
    const wire = protocol.models(conn);
    const url = endpoint(conn.baseUrl, wire.path);
    const res = await send(url, { method: 'GET', ...request(wire, { accept: 'application/json' }), signal }, options);
    try {
      if (res.status < 200 || res.status > 299) throw await failure(protocol, res, conn.apiKey);
      const models = protocol.parseModels(await readJson(res, 8 * 1024 * 1024));
      if (!models) throw protocolError(protocol.label, 'answered the model list with something that is not one');
      return models;
    } finally {
      await res.close();
    }
  }

  return {
    /**
     * One model answer as a stream of events (text deltas, complete tool calls, usage, stop). A rate limit,
     * overload, 5xx or lost connection is retried while nothing has been streamed yet — a retry after the first
     * event would repeat text the caller already has — up to `retry.attempts` times; then its AiProviderError.
     */
    async *streamChat(req: ChatRequest): AsyncGenerator<ChatEvent> {
      const protocol = PROTOCOLS[req.kind];
      for (let n = 1; ; n++) {
        let streamed = false;
        try {
          for await (const event of attempt(protocol, req)) {
            streamed = true;
            yield event;
          }
          return;
        } catch (err) {
          if (streamed || !(err instanceof AiProviderError) || !err.retriable || n > options.retry.attempts) throw err;
          const delay = delayBefore(err, n);
          if (delay === undefined) throw err;
          await sleep(delay, req.signal);
        }
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
