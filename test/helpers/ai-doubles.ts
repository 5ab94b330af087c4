import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Contract-level doubles of the two provider APIs on loopback: the status codes, headers, error bodies and SSE
 * framing the real services send (OpenAI chat completions streaming; Anthropic messages streaming), byte for byte.
 * Each test scripts the answers (a queue) and reads back every request the double received.
 */

/** One write to the socket. Writes go out one by one with a pause between, so each is its own TCP segment. */
export type Write = string | Buffer;

export type Reply =
  /**
   * A 200 event stream; after the last write, `cut` destroys the connection and `hang` keeps it open and silent
   * (until the client goes), instead of ending the response.
   */
  | { stream: Write[]; headers?: Record<string, string>; cut?: boolean; hang?: boolean }
  | { status: number; json: unknown; headers?: Record<string, string> };

type Body = Record<string, unknown>;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON object of the body; undefined for a GET (or a body that is not a JSON object). */
  body: Body | undefined;
  /** How the answer ended: written to its end, or its connection closed by the client (or `cut`) before. */
  ended: Promise<'completed' | 'closed early'>;
}

export interface ProviderDouble {
  baseUrl: string;
  apiKey: string;
  /** Every request, in arrival order (model lists included). */
  requests: RecordedRequest[];
  /** Queues answers to the next chat requests (`/chat/completions`, `/v1/messages`). */
  reply(...replies: Reply[]): void;
  /** Queues answers to the next model-list requests; without one, the list of `models` is served. */
  replyModels(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** Pause between two writes of a stream: long enough for the peer to read them apart. */
const WRITE_GAP_MS = 5;

interface Flavour {
  /** Where chat and the model list live. */
  chatPath: string;
  modelsPath: string;
  /** undefined when the request may go on, else the answer the real API gives. */
  refuse(req: http.IncomingMessage, body: Body | undefined, apiKey: string): Reply | undefined;
  notFound(req: http.IncomingMessage): Reply;
  models(ids: string[]): unknown;
  headers(): Record<string, string>;
}

async function startDouble(flavour: Flavour, opts: { apiKey?: string; models?: string[]; prefix: string }) {
  const apiKey = opts.apiKey ?? `${opts.prefix}${randomBytes(16).toString('hex')}`;
  const requests: RecordedRequest[] = [];
  const chatQueue: Reply[] = [];
  const modelQueue: Reply[] = [];

  async function answer(res: http.ServerResponse, reply: Reply) {
    const base = { ...flavour.headers(), ...reply.headers };
    if ('json' in reply) {
      const body = JSON.stringify(reply.json);
      res.writeHead(reply.status, {
        ...base,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    res.socket?.setNoDelay(true);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...base,
    });
    res.flushHeaders();
    for (const piece of reply.stream) {
      await new Promise<void>((resolve, reject) => res.write(piece, (err) => (err ? reject(err) : resolve())));
      await new Promise((r) => setTimeout(r, WRITE_GAP_MS));
    }
    if (reply.cut) res.socket?.destroy();
    else if (!reply.hang) res.end();
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Body | undefined;
      try {
        const parsed: unknown = raw ? JSON.parse(raw) : undefined;
        body = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Body) : undefined;
      } catch {
        body = undefined;
      }
      const path = req.url ?? '/';
      const ended = new Promise<'completed' | 'closed early'>((resolve) =>
        res.once('close', () => resolve(res.writableFinished ? 'completed' : 'closed early')),
      );
      requests.push({ method: req.method ?? '', path, headers: req.headers, body, ended });
      const route = path.split('?')[0];
      let reply: Reply | undefined;
      if (route === flavour.chatPath && req.method === 'POST') {
        reply = flavour.refuse(req, body, apiKey) ?? chatQueue.shift();
        // An unscripted call is a test's mistake: answer so that it fails loudly, not hangs.
        reply ??= { status: 500, json: { error: { type: 'double', message: 'no scripted reply left' } } };
      } else if (route === flavour.modelsPath && req.method === 'GET') {
        reply = flavour.refuse(req, body, apiKey) ??
          modelQueue.shift() ?? { status: 200, json: flavour.models(opts.models ?? []) };
      } else reply = flavour.notFound(req);
      answer(res, reply).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    apiKey,
    requests,
    reply: (...r: Reply[]) => void chatQueue.push(...r),
    replyModels: (...r: Reply[]) => void modelQueue.push(...r),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

// ----- OpenAI chat completions -----

const openAiError = (status: number, message: string, type: string, code: string | null, headers = {}): Reply => ({
  status,
  json: { error: { message, type, param: null, code } },
  headers,
});

/** The OpenAI API at `baseUrl` (…/v1), as api.openai.com answers it. */
export async function startOpenAiDouble(opts: { apiKey?: string; models?: string[] } = {}): Promise<ProviderDouble> {
  const d = await startDouble(
    {
      chatPath: '/v1/chat/completions',
      modelsPath: '/v1/models',
      refuse(req, body, apiKey) {
        const auth = req.headers.authorization;
        if (!auth)
          return openAiError(
            401,
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            'invalid_request_error',
            null,
          );
        if (auth !== `Bearer ${apiKey}`)
          return openAiError(
            401,
            `Incorrect API key provided: ${auth.replace(/^Bearer /, '')}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            'invalid_request_error',
            'invalid_api_key',
          );
        if (req.method === 'POST' && (!body?.model || !Array.isArray(body.messages)))
          return openAiError(
            400,
            "Missing required parameter: 'model'.",
            'invalid_request_error',
            'missing_required_parameter',
          );
        return undefined;
      },
      notFound: (req) => openAiError(404, `Invalid URL (${req.method} ${req.url})`, 'invalid_request_error', null),
      models: (ids) => ({
        object: 'list',
        data: ids.map((id) => ({ id, object: 'model', created: 1721172741, owned_by: 'system' })),
      }),
      headers: () => ({
        'x-request-id': `req_${randomBytes(16).toString('hex')}`,
        'openai-version': '2020-10-01',
        'openai-processing-ms': '112',
      }),
    },
    { ...opts, prefix: 'sk-proj-' },
  );
  return { ...d, baseUrl: `http://127.0.0.1:${d.port}/v1` };
}

const chunkId = `chatcmpl-${randomBytes(12).toString('base64url')}`;

/** Frames of an OpenAI stream, as the API writes them with `stream_options.include_usage`. */
export const openai = {
  chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return `data: ${JSON.stringify({
      id: chunkId,
      object: 'chat.completion.chunk',
      created: 1732350000,
      model: 'gpt-4o-mini-2024-07-18',
      system_fingerprint: 'fp_0ba0d124f1',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    })}\n\n`;
  },
  /** The last chunk before [DONE]: usage, and `choices: []` (OpenAI) or `choices: null` (some servers). */
  usage(prompt: number, completion: number, choices: [] | null = []): string {
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    return `data: ${JSON.stringify({ id: chunkId, object: 'chat.completion.chunk', created: 1732350000, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_0ba0d124f1', choices, usage })}\n\n`;
  },
  done: 'data: [DONE]\n\n',
  /** A text answer: the role chunk, one chunk per part, the finish chunk, usage, [DONE]. */
  text(parts: string[], o: { usage?: [number, number]; finish?: string } = {}): Write[] {
    return [
      openai.chunk({ role: 'assistant', content: '', refusal: null }),
      ...parts.map((content) => openai.chunk({ content })),
      openai.chunk({}, o.finish ?? 'stop'),
      ...(o.usage ? [openai.usage(...o.usage)] : []),
      openai.done,
    ];
  },
  /** Tool calls: per call, a first fragment (index, id, name) then its argument text in the pieces given. */
  toolCalls(calls: { id: string; name: string; args: string[] }[], o: { usage?: [number, number] } = {}): Write[] {
    return [
      openai.chunk({ role: 'assistant', content: null, refusal: null }),
      ...calls.flatMap((c, index) => [
        openai.chunk({
          tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }],
        }),
        ...c.args.map((a) => openai.chunk({ tool_calls: [{ index, function: { arguments: a } }] })),
      ]),
      openai.chunk({}, 'tool_calls'),
      ...(o.usage ? [openai.usage(...o.usage)] : []),
      openai.done,
    ];
  },
  rateLimited: (retryAfter?: string): Reply =>
    openAiError(
      429,
      'Rate limit reached for gpt-4o-mini in organization org-test on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.',
      'requests',
      'rate_limit_exceeded',
      retryAfter === undefined ? {} : { 'retry-after': retryAfter },
    ),
  error: openAiError,
};

// ----- Anthropic messages -----

const anthropicError = (status: number, type: string, message: string, headers = {}): Reply => ({
  status,
  json: { type: 'error', error: { type, message } },
  headers,
});

/** The Anthropic API at `baseUrl` (its root; paths are /v1/…), as api.anthropic.com answers it. */
export async function startAnthropicDouble(opts: { apiKey?: string; models?: string[] } = {}): Promise<ProviderDouble> {
  const d = await startDouble(
    {
      chatPath: '/v1/messages',
      modelsPath: '/v1/models',
      refuse(req, body, apiKey) {
        // The API takes the key as x-api-key (what Slipway sends) or as a bearer token (what SDKs of API version
        // 2026-10-21 send).
        const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
        if (!key) return anthropicError(401, 'authentication_error', 'x-api-key header is required');
        if (key !== apiKey) return anthropicError(401, 'authentication_error', 'invalid x-api-key');
        if (!req.headers['anthropic-version'])
          return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
        if (req.method !== 'POST') return undefined;
        if (typeof body !== 'object' || body === null)
          return anthropicError(400, 'invalid_request_error', 'invalid JSON');
        if (typeof body.max_tokens !== 'number')
          return anthropicError(400, 'invalid_request_error', 'max_tokens: Field required');
        if (!Array.isArray(body.messages) || body.messages.length === 0)
          return anthropicError(400, 'invalid_request_error', 'messages: at least one message is required');
        return undefined;
      },
      notFound: () => anthropicError(404, 'not_found_error', 'Not Found'),
      models: (ids) => ({
        data: ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-05-22T00:00:00Z' })),
        has_more: false,
        first_id: ids[0] ?? null,
        last_id: ids.at(-1) ?? null,
      }),
      headers: () => ({
        'request-id': `req_${randomBytes(12).toString('base64url')}`,
        'anthropic-organization-id': '9b5e6f0a-0000-4000-8000-000000000000',
      }),
    },
    { ...opts, prefix: 'sk-ant-api03-' },
  );
  return { ...d, baseUrl: `http://127.0.0.1:${d.port}` };
}

/** Frames of an Anthropic stream: `event:` then `data:` (whose JSON repeats the type), blank line. */
export const anthropic = {
  event: (name: string, data: Record<string, unknown>): string =>
    `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`,
  // The API writes its ping with a space after the colon, unlike its other events.
  ping: 'event: ping\ndata: {"type": "ping"}\n\n',
  messageStart: (inputTokens: number): string =>
    anthropic.event('message_start', {
      message: {
        id: `msg_${randomBytes(12).toString('base64url')}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-20250514',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 1 },
      },
    }),
  textBlock: (index: number, parts: string[]): Write[] => [
    anthropic.event('content_block_start', { index, content_block: { type: 'text', text: '' } }),
    ...parts.map((text) => anthropic.event('content_block_delta', { index, delta: { type: 'text_delta', text } })),
    anthropic.event('content_block_stop', { index }),
  ],
  toolUseBlock: (index: number, id: string, name: string, json: string[]): Write[] => [
    anthropic.event('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }),
    ...json.map((partial_json) =>
      anthropic.event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
    ),
    anthropic.event('content_block_stop', { index }),
  ],
  end: (stopReason: string, outputTokens: number): Write[] => [
    anthropic.event('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    anthropic.event('message_stop', {}),
  ],
  /** A whole answer: message_start, a ping, the blocks, message_delta, message_stop. */
  message: (blocks: Write[][], o: { stopReason?: string; usage?: [number, number] } = {}): Write[] => [
    anthropic.messageStart(o.usage?.[0] ?? 10),
    anthropic.ping,
    ...blocks.flat(),
    ...anthropic.end(o.stopReason ?? 'end_turn', o.usage?.[1] ?? 5),
  ],
  /** The error event that may end any stream, written as the API writes it. */
  streamError: (type: string, message: string): string =>
    `event: error\ndata: {"type": "error", "error": {"type": "${type}", "message": "${message}"}}\n\n`,
  overloaded: (): Reply => anthropicError(529, 'overloaded_error', 'Overloaded'),
  rateLimited: (retryAfter?: string): Reply =>
    anthropicError(
      429,
      'rate_limit_error',
      'This request would exceed the rate limit for your organization of 50 requests per minute.',
      retryAfter === undefined ? {} : { 'retry-after': retryAfter },
    ),
  error: anthropicError,
};

/**
 * Answers the real services or the servers copying them send that the SDKs' own stream helpers misread
 * (test/integration/ai-doubles-contract.test.ts shows how), which shared/ai must read right.
 */
export const variants = {
  /** Whole tool calls without `index`, told apart by their ids, as Gemini's OpenAI endpoint sends them. */
  unindexedToolCalls: (calls: { id: string; path: string }[]): Write[] => [
    ...calls.map(({ id, path }) =>
      openai.chunk({
        role: 'assistant',
        tool_calls: [{ id, type: 'function', function: { name: 'write_file', arguments: `{"path":"${path}"}` } }],
      }),
    ),
    openai.chunk({}, 'tool_calls'),
    openai.done,
  ],
  /** A text answer whose usage chunk says `choices: null`, as some servers write it. */
  usageWithNullChoices: (text: string, usage: [number, number]): Write[] => [
    openai.chunk({ role: 'assistant', content: text }),
    openai.chunk({}, 'stop'),
    openai.usage(...usage, null),
    openai.done,
  ],
  /** A write_file call cut by max_tokens inside its content: its input text is not a JSON object. */
  cutToolUse: (index: number, id: string): Write[] =>
    anthropic.toolUseBlock(index, id, 'write_file', ['{"path": "index.html", ', '"content": "<p>Gr']),
  /** A stream as a proxy that drops the `event:` lines passes it on: data lines only. */
  withoutEventLines: (writes: Write[]): Write[] => writes.map((w) => String(w).replace(/^event: [^\n]*\n/, '')),
};

/** `writes` with the write holding `needle` cut in two inside the needle's UTF-8 bytes (a character split). */
export function splitInside(writes: Write[], needle: string): Write[] {
  const at = writes.findIndex((w) => Buffer.from(w).includes(needle));
  if (at < 0) throw new Error(`no write contains ${needle}`);
  const bytes = Buffer.from(writes[at]!);
  const cut = bytes.indexOf(needle) + Math.max(1, Math.floor(Buffer.byteLength(needle) / 2));
  return [...writes.slice(0, at), bytes.subarray(0, cut), bytes.subarray(cut), ...writes.slice(at + 1)];
}
