import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { makeZip } from '../helpers/zip';

type Body = Record<string, unknown> & { code?: string; error?: string; details?: Record<string, unknown> };

/** What must never reach a caller: library names and text, stack frames, file paths. */
const INTERNAL = [
  /multer/i,
  /busboy/i,
  /Unexpected end of form/i,
  /Malformed part header/i,
  /JSON at position/i,
  /Unexpected token/i,
  /central directory record signature/i,
  /\bat .*\(.*:\d+:\d+\)/,
  /\/(work|tmp|root|home|usr)\//,
  /\.ts:\d+/,
  /TypeError|toISOString/,
];
const expectNoInternals = (what: unknown) => {
  const text = JSON.stringify(what);
  for (const pattern of INTERNAL)
    expect([pattern.source, text]).toEqual([pattern.source, expect.not.stringMatching(pattern)]);
};

/** Multer names its files with 32 hex characters; any such file under the upload directory is one left behind. */
function uploadFilesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => /^[0-9a-f]{32}$/.test(path.basename(f)));
}

/**
 * A chunked multipart upload of `size` bytes, written until the server answers: the way a client that does not
 * declare a Content-Length sends an over-size archive.
 */
function chunkedUpload(
  baseUrl: string,
  token: string,
  size: number,
  /** Bytes before the first boundary: counted against the body cap, never seen by the file-size limit. */
  preamble = 0,
): Promise<{ status: number; body: Body }> {
  const boundary = `----slipway${randomUUID()}`;
  const url = new URL('/compat/uploads/zip', baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Body }));
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    if (preamble) req.write(Buffer.alloc(preamble, 0x20));
    req.write(
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="big.zip"\r\n` +
        'Content-Type: application/zip\r\n\r\n',
    );
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (!answered && sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end(`\r\n--${boundary}--\r\n`);
    };
    pump();
  });
}

describe('HTTP hygiene: encoding, temp files, non-origin paths, request IDs, access log, internal details', () => {
  let h: Harness;
  const lines: Record<string, unknown>[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-hygiene-'));
  const maxBytes = 64 * 1024;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    h = await startHarness(
      'hygiene',
      {
        LOG_LEVEL: 'info',
        UPLOAD_MAX_BYTES: String(maxBytes),
        UPLOAD_TMP_DIR: tmp,
        // Every route is called with a malformed parameter: past the refused-request budget once routes grew past it.
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        RATE_LIMIT_PLATFORM_REFUSED_PER_15MIN: '100000',
      },
      { worker: false, logDestination: sink },
    );
  });
  afterAll(async () => {
    await h?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('answers a malformed percent-encoding in any path parameter, on both origins, with 400 in the origin’s shape', async () => {
    const api = client(h, (await h.newOrg()).token);
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const withParams = Object.entries(doc.paths).filter(([p]) => p.includes('{'));
    expect(withParams.length).toBeGreaterThan(5);
    for (const [template, ops] of withParams) {
      const url = template.replace(/\{\w+\}/g, '%ff');
      for (const method of Object.keys(ops)) {
        const r = await api.call<Body>(
          method.toUpperCase(),
          url,
          method === 'get' || method === 'delete' ? undefined : {},
        );
        expect([method, url, r.status]).toEqual([method, url, 400]);
        if (url.startsWith('/compat'))
          expect(r.body).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringMatching(/percent-encoding/) });
        else expect(r.body).toEqual({ status: 'error', message: expect.stringMatching(/percent-encoding/) });
      }
    }
  });

  it('leaves no temp file behind an over-size upload, chunked or declared, nor behind a malformed one', async () => {
    const org = await h.newOrg();
    expect(uploadFilesUnder(tmp)).toEqual([]);
    // Past the body cap while the file part is still under the file limit: the body counter refuses it
    // mid-stream, with multer's file open.
    const chunked = await chunkedUpload(h.baseUrl, org.token, 2 * 1024 * 1024, 96 * 1024);
    expect(chunked.status).toBe(400);
    expect(chunked.body).toMatchObject({ code: 'INVALID_REQUEST', details: { maxBytes } });
    expect(uploadFilesUnder(tmp)).toEqual([]);
    // Just past the cap: multer's own file-size limit refuses it.
    const justOver = await chunkedUpload(h.baseUrl, org.token, maxBytes + 16 * 1024);
    expect(justOver.status).toBe(400);
    expect(justOver.body.error).toMatch(/larger than the 65536-byte limit/);
    expect(uploadFilesUnder(tmp)).toEqual([]);

    const api = client(h, org.token);
    const cutShort = await api.call<Body>(
      'POST',
      '/compat/uploads/zip',
      '--x\r\nContent-Disposition: form-data; name="archive"; filename="a.zip"\r\n\r\nPK',
      {
        'content-type': 'multipart/form-data; boundary=x',
      },
    );
    expect(cutShort.status).toBe(400);
    expect(cutShort.body).toEqual({
      error: expect.stringMatching(/multipart body could not be read/),
      code: 'INVALID_REQUEST',
      details: {},
    });
    expectNoInternals(cutShort.body);
    expect(uploadFilesUnder(tmp)).toEqual([]);
  });

  it('answers 405 with Allow to a method a path does not take, in the origin’s shape', async () => {
    const api = client(h, (await h.newOrg()).token);
    const trace = await api.call<Body>('PUT', '/compat/providers');
    expect(trace.status).toBe(405);
    expect(trace.headers.get('allow')).toBe('GET, HEAD');
    expect(trace.body).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringMatching(/use GET/) });
    const del = await api.call<Body>('PATCH', `/platform/tokens/${randomUUID()}`, {});
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('DELETE');
    expect(del.body).toEqual({ status: 'error', message: expect.stringMatching(/use DELETE/) });
    // A fixed path beside a parameter one (/tokens/current, /tokens/{id}) advertises only its own methods.
    const current = await api.call<Body>('OPTIONS', '/platform/tokens/current');
    expect(current.status).toBe(405);
    expect(current.headers.get('allow')).toBe('GET, HEAD');
    const deleted = await api.call<Body>('DELETE', '/platform/tokens/current');
    expect([deleted.status, deleted.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await api.get<Body>('/compat/nothing-here')).status).toBe(404);
  });

  it('carries the request ID of a deploy to its workflow, so an operator goes from the request to the workflow', async () => {
    const api = client(h, (await h.newOrg()).token);
    const requestId = `op-${randomUUID()}`;
    const r = await api.call<Body>(
      'POST',
      '/compat/deploy',
      { image: 'slipway-test/none:1', name: 'traced' },
      { 'x-request-id': requestId },
    );
    expect(r.status).toBe(202);
    expect(r.headers.get('x-request-id')).toBe(requestId);
    const described = await h.temporal.workflow.getHandle(`deployment/${String(r.body.deploymentId)}`).describe();
    expect(described.memo).toMatchObject({ requestId });
    expect((await api.del(`/compat/deployments/${String(r.body.deploymentId)}`)).status).toBe(204);
  });

  it("keeps the body's idempotency key (requestId on the wire) apart from the X-Request-Id of the requests", async () => {
    const api = client(h, (await h.newOrg()).token);
    const [key, deployCall, destroyCall] = [`key-${randomUUID()}`, `op-${randomUUID()}`, `op-${randomUUID()}`];
    const body = { image: 'slipway-test/none:1', name: 'keyed', requestId: key };
    const r = await api.call<Body>('POST', '/compat/deploy', body, { 'x-request-id': deployCall });
    expect(r.status).toBe(202);
    const id = String(r.body.deploymentId);
    const described = await h.temporal.workflow.getHandle(`deployment/${id}`).describe();
    expect(described.memo).toMatchObject({ requestId: deployCall });
    // The record holds the key as the idempotency key, never under the name of the correlation ID.
    const record = await h.db.collection('deployments').findOne({ _id: id as never });
    expect(record).toMatchObject({ idempotencyKey: key });
    expect(record).not.toHaveProperty('requestId');
    // The replay's refusal names the key by its body field, as the caller sent it.
    const replay = await api.post<Body>('/compat/deploy', body);
    expect([replay.status, replay.body.details]).toEqual([409, { deploymentId: id, requestId: key }]);
    expect(
      (await api.call('DELETE', `/compat/deployments/${id}`, undefined, { 'x-request-id': destroyCall })).status,
    ).toBe(204);
    expect(await h.db.collection('deployment_destroys').findOne({ _id: id as never })).toMatchObject({
      requestId: destroyCall,
    });
  });

  it('answers outside the three origins in JSON, never an HTML page', async () => {
    const missing = await fetch(`${h.baseUrl}/no/such/path`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/application\/json/);
    expect(await missing.json()).toEqual({ error: expect.stringMatching(/No route GET \/no\/such\/path/) });

    const badJson = await fetch(`${h.baseUrl}/healthz`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    expect(badJson.status).toBe(400);
    expect(badJson.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await badJson.json()) as Body;
    expect(body).toEqual({ error: 'The request body is not valid JSON.' });
    expectNoInternals(body);
  });

  it('tells the caller what was wrong with a body in its own words, never the parser’s', async () => {
    const api = client(h, (await h.newOrg()).token);
    const notJson = await api.call<Body>('POST', '/compat/deploy', '{"image": nope', {});
    expect(notJson.body).toEqual({
      error: 'The request body is not valid JSON.',
      code: 'INVALID_REQUEST',
      details: {},
    });
    const charset = await api.call<Body>('POST', '/compat/deploy', '{}', {
      'content-type': 'application/json; charset=latin1',
    });
    expect(charset.status).toBe(400);
    expect(charset.body.error).not.toMatch(/unsupported charset/);
    expect(charset.body.error).toMatch(/UTF-8/);
    const platform = await api.call<Body>('POST', '/platform/tokens', '{"name":', {});
    expect(platform.body).toEqual({ status: 'error', message: 'The request body is not valid JSON.' });
    const corrupt = (await makeZip({ 'a.txt': 'x'.repeat(1000) })).subarray(0, 60);
    const form = new FormData();
    form.append('archive', new Blob([corrupt]), 'c.zip');
    const zip = await api.call<Body>('POST', '/compat/uploads/zip', form);
    expect(zip.status).toBe(400);
    expectNoInternals(zip.body);
  });

  it('names every request in x-request-id and in every 5xx body, keeps a sane incoming ID, and logs one line per request without the token', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const ok = await api.get('/compat/deployments');
    expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const mine = `trace-${randomUUID()}`;
    expect(
      (await api.call('GET', '/compat/providers', undefined, { 'x-request-id': mine })).headers.get('x-request-id'),
    ).toBe(mine);
    const forged = await api.call('GET', '/compat/providers', undefined, { 'x-request-id': 'a b\tc' });
    expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await fetch(`${h.baseUrl}/healthz`)).headers.get('x-request-id')).toBeTruthy();

    // A record the views cannot render: a real server error on each origin.
    await h.db
      .collection('deployments')
      .insertOne({ _id: randomUUID() as never, orgId: org.orgId, origin: 'compat', createdAt: 'garbage' });
    const compat500 = await api.get<Body>('/compat/deployments');
    expect(compat500.status).toBe(500);
    const compatId = compat500.headers.get('x-request-id')!;
    expect(compat500.body).toEqual({
      error: expect.stringContaining(compatId),
      code: 'INTERNAL_ERROR',
      details: { requestId: compatId },
    });
    expectNoInternals(compat500.body);
    await h.db.collection('tokens').insertOne({
      _id: randomUUID() as never,
      orgId: org.orgId,
      userId: org.userId,
      name: 'broken',
      hash: randomUUID(),
      scopes: [],
      expiresAt: 'garbage',
      createdAt: new Date(),
    });
    const platform500 = await api.get<Body>('/platform/tokens');
    expect(platform500.status).toBe(500);
    const platformId = platform500.headers.get('x-request-id')!;
    expect(platform500.body).toEqual({ status: 'error', message: expect.stringContaining(platformId) });
    expectNoInternals(platform500.body);

    const accessLine = (id: string) => lines.find((l) => l.requestId === id && 'durationMs' in l);
    expect(accessLine(mine)).toMatchObject({
      method: 'GET',
      route: '/compat/providers',
      status: 200,
      orgId: org.orgId,
      durationMs: expect.any(Number),
    });
    expect(accessLine(compatId)).toMatchObject({ route: '/compat/deployments', status: 500, orgId: org.orgId });
    expect(accessLine(platformId)).toMatchObject({ route: '/platform/tokens', status: 500 });
    // The failure itself is in the server log, under the same request ID.
    expect(
      lines.some(
        (l) => l.requestId === compatId && l.msg === 'unhandled error' && JSON.stringify(l.err).includes('toISOString'),
      ),
    ).toBe(true);
    const all = JSON.stringify(lines);
    expect(all).not.toContain(org.token);
    expect(all).not.toMatch(/bearer/i);
    expect(all).not.toMatch(/authorization/i);
  });
});
