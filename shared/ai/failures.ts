import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import { AiProviderError, errorForStatus, errorInStream, providerText, retryAfterMs } from './errors';

/** The errors and their causes, outermost first (the SDKs wrap what fetch threw; undici wraps the socket's error). */
function* causes(err: unknown): Generator<unknown> {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause;
  }
}

const silent = (host: string, idleTimeoutMs: number) =>
  new AiProviderError('provider_unavailable', `the provider at ${host} was silent for ${idleTimeoutMs / 1000} s`);

/** Our words for a failed connection: never the driver's text, which may name internal addresses. */
function networkError(err: unknown, host: string, idleTimeoutMs: number): AiProviderError {
  const codes = [...causes(err)].map((e) => `${(e as { code?: unknown }).code ?? ''} ${(e as Error).name ?? ''}`);
  const said = (pattern: RegExp) => codes.some((c) => pattern.test(c));
  if (said(/TIMEOUT|TimeoutError/)) return silent(host, idleTimeoutMs);
  if (said(/ECONNREFUSED/))
    return new AiProviderError('provider_unavailable', `the provider at ${host} refused the connection`);
  if (said(/CERT|SSL|TLS/i))
    return new AiProviderError(
      'provider_unavailable',
      `the TLS handshake with ${host} failed: its certificate is not trusted`,
    );
  return new AiProviderError('provider_unavailable', `the connection to the provider at ${host} failed or was cut`);
}

/** Where a failure happened, for the words that name it. */
export interface FailureContext {
  /** Names the provider ("the OpenAI-compatible provider sent …"). */
  label: string;
  apiKey: string;
  host: string;
  idleTimeoutMs: number;
}

/** The provider's own error type and message in either SDK's APIError (their bodies differ in shape). */
function detailOf(err: InstanceType<typeof OpenAI.APIError | typeof Anthropic.APIError>): {
  type?: string;
  message?: string;
} {
  if (err instanceof Anthropic.APIError) return { type: err.type ?? undefined, message: err.apiMessage ?? undefined };
  const body = err.error as { message?: unknown } | undefined;
  return {
    type: err.type ?? err.code ?? undefined,
    message: typeof body?.message === 'string' ? body.message : undefined,
  };
}

/**
 * The one place a failure of an SDK call becomes ours: a status error by its status and the provider's type (what
 * a bad key, a rate limit, an unknown model say), an error the stream reported by its type, a connection by its
 * cause. Our own errors (the address guard, the size bound) come back unwrapped. Anything else is a bug of ours
 * and is passed on as it is.
 */
export function providerFailure(err: unknown, ctx: FailureContext): unknown {
  const ours = [...causes(err)].find((e) => e instanceof AiProviderError);
  if (ours) return ours;
  const text = (message: string | undefined) => providerText(message, ctx.apiKey);
  if (err instanceof OpenAI.APIConnectionError || err instanceof Anthropic.APIConnectionError) {
    // A timeout before the answer's headers comes without its cause: the SDK's own timer or our dispatcher's.
    if (err instanceof OpenAI.APIConnectionTimeoutError || err instanceof Anthropic.APIConnectionTimeoutError)
      return silent(ctx.host, ctx.idleTimeoutMs);
    return networkError(err.cause, ctx.host, ctx.idleTimeoutMs);
  }
  if (err instanceof OpenAI.APIError || err instanceof Anthropic.APIError) {
    const detail = detailOf(err);
    if (err.status === undefined) return errorInStream({ ...detail, message: text(detail.message) });
    return errorForStatus(err.status, {
      type: detail.type,
      message: text(detail.message),
      ...(err.headers ? { retryAfterMs: retryAfterMs(err.headers) } : {}),
    });
  }
  // The SDKs parse each event's data with JSON.parse and let its SyntaxError through.
  if (err instanceof SyntaxError)
    return new AiProviderError('provider_protocol', `the ${ctx.label} sent an event whose data is not JSON`);
  if (err instanceof OpenAI.OpenAIError || err instanceof Anthropic.AnthropicError)
    return new AiProviderError('provider_protocol', `the ${ctx.label} answered outside its protocol`);
  // A body cut or gone silent mid-stream reaches us as undici's error, with a code somewhere in its causes.
  if ([...causes(err)].some((e) => typeof (e as { code?: unknown }).code === 'string'))
    return networkError(err, ctx.host, ctx.idleTimeoutMs);
  return err;
}
