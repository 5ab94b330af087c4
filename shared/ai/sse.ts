import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';

import { AiProviderError } from './errors';

export type SseMessage = EventSourceMessage;

/** One line of SSE never needs this much; a stream that buffers more is not one. */
const MAX_PENDING_CHARS = 4 * 1024 * 1024;

/**
 * The server-sent events of a byte stream, in order. Bytes are decoded with one streaming decoder, so a character
 * whose UTF-8 bytes arrive in two network reads is whole; framing is eventsource-parser's (CRLF, CR or LF line
 * ends, multi-line data, comments). A stream longer than `maxBytes` or with an endless line is a protocol error.
 */
export async function* readSse(
  body: AsyncIterable<Uint8Array>,
  opts: { maxBytes: number },
): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder('utf-8');
  const ready: SseMessage[] = [];
  let failure: ParseError | undefined;
  const parser = createParser({
    maxBufferSize: MAX_PENDING_CHARS,
    onEvent: (message) => ready.push(message),
    onError: (err) => {
      // An unknown field is legal SSE (readers ignore it); only a runaway buffer ends the stream.
      if (err.type === 'max-buffer-size-exceeded') failure ??= err;
    },
  });
  let total = 0;
  const drain = function* () {
    if (failure) throw new AiProviderError('provider_protocol', 'the provider sent an SSE line without an end');
    while (ready.length > 0) yield ready.shift()!;
  };
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > opts.maxBytes)
      throw new AiProviderError(
        'provider_protocol',
        `the provider's answer passed ${Math.round(opts.maxBytes / 1024 / 1024)} MiB`,
      );
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* drain();
  }
  // As the SSE standard says, an event cut off before its blank line is dropped: the adapters then see a stream
  // that ended before its final event and say so.
  parser.feed(decoder.decode());
  yield* drain();
}

/** The JSON of an event's data, or a protocol error naming what the provider sent. */
export function parseData(message: SseMessage, provider: string): unknown {
  try {
    return JSON.parse(message.data);
  } catch {
    throw new AiProviderError(
      'provider_protocol',
      `${provider} sent an event whose data is not JSON${message.event ? ` (event ${message.event})` : ''}`,
    );
  }
}
