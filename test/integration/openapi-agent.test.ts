import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

/* eslint-disable @typescript-eslint/no-explicit-any -- the agent reads an untyped document, as a real one would */

/**
 * An agent that knows only the base URL, a token and its task ("run this image, listening on this port"): every
 * operation, parameter and field it uses, it finds in /openapi.json by what the document says about it.
 */
async function scriptedAgent(baseUrl: string, token: string, task: { image: string; port: number }) {
  const doc: any = await (await fetch(`${baseUrl}/openapi.json`)).json();
  const resolve = (schema: any): any =>
    schema?.$ref ? doc.components.schemas[String(schema.$ref).split('/').pop()!] : schema;
  const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, ...op })),
  );
  const bodyOf = (op: any) => resolve(op.requestBody?.content?.['application/json']?.schema);
  const queryParam = (op: any, name: string) =>
    (op.parameters ?? []).find((p: any) => p.in === 'query' && p.name === name);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  };
  const trail: string[] = [];

  // 1. The operation that deploys an image: a POST whose body requires `image`.
  const deploy = ops.find((o) => o.method === 'post' && (bodyOf(o)?.required ?? []).includes('image'));
  if (!deploy) throw new Error('no operation deploys an image');
  const schema = bodyOf(deploy);
  const body: Record<string, unknown> = { image: task.image };
  if (schema.properties?.port) body.port = task.port;
  if ((schema.required ?? []).includes('name') || schema.properties?.name) body.name = 'agent-app';
  const accepted = await call('post', deploy.path, body);
  trail.push(`${deploy.operationId} ${accepted.status}`);
  // The new deployment's ID: the response's uuid-formatted property.
  const acceptedSchema = resolve(deploy.responses[String(accepted.status)]?.content?.['application/json']?.schema);
  const idField = Object.entries(acceptedSchema?.properties ?? {}).find(
    ([, s]: [string, any]) => s.format === 'uuid',
  )?.[0];
  const id = idField ? String(accepted.body[idField]) : undefined;
  if (!id) throw new Error(`the deploy answer names no ID: ${JSON.stringify(accepted.body)}`);

  // 2. In the same origin, the read of one deployment that can wait for a status.
  const origin = deploy.path.split('/')[1];
  const read = ops.find(
    (o) => o.method === 'get' && o.path.startsWith(`/${origin}/`) && /\{\w+\}$/.test(o.path) && queryParam(o, 'wait'),
  );
  if (!read) throw new Error('no operation waits for a status');
  const waitSchema = resolve(queryParam(read, 'wait').schema);
  const target = (waitSchema.enum as string[]).find((s) => s === 'running');
  const timeout = resolve(queryParam(read, 'timeout')?.schema)?.maximum ?? 60;
  const itemPath = read.path.replace(/\{\w+\}$/, id);
  const status = await call('get', `${itemPath}?wait=${target}&timeout=${timeout}`);
  trail.push(`${read.operationId} ${status.status} ${status.body.status}`);

  // 3. Its logs: the GET under the same item path ending in /logs. 4. Its destruction: DELETE on the item path.
  const logsOp = ops.find((o) => o.method === 'get' && o.path === `${read.path}/logs`);
  const logs = logsOp ? await call('get', `${itemPath}/logs`) : undefined;
  trail.push(`${logsOp?.operationId} ${logs?.status}`);
  const destroy = ops.find((o) => o.method === 'delete' && o.path === read.path);
  const destroyed = destroy ? await call('delete', itemPath) : undefined;
  trail.push(`${destroy?.operationId} ${destroyed?.status}`);
  const gone = await call('get', itemPath);
  trail.push(`${read.operationId} ${gone.status}`);
  return { id, trail, status: status.body, logs: logs?.body };
}

describe('an agent that knows only /openapi.json', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('openapi-agent');
  });
  afterAll(() => h?.stop());

  it('deploys, waits with ?wait=running, reads the logs and destroys, finding every step in the document', async () => {
    const image = await buildFixtureImage(h.docker, 'hello');
    const org = await h.newOrg();
    const run = await scriptedAgent(h.baseUrl, org.token, { image, port: 8080 });
    expect(run.status).toMatchObject({ status: 'running' });
    expect(run.trail).toEqual([
      expect.stringMatching(/ 202$/),
      expect.stringMatching(/ 200 running$/),
      expect.stringMatching(/_logs 200$/),
      expect.stringMatching(/ 204$/),
      expect.stringMatching(/ 404$/),
    ]);
    expect(run.logs).toMatchObject({ lines: expect.any(Array) });
  });

  it('finds a unique operation ID on every operation', async () => {
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const ids = Object.values(doc.paths).flatMap((m) => Object.values(m).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === 'string' && /^[a-z0-9_]+$/i.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
