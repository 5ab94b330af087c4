import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { LABELS } from '@shared/constants';

import { cliUser } from '../helpers/cli-runner';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { readResult } from '../helpers/mcp';

interface Deployment {
  id: string;
  status: string;
  revision: number;
  envVarNames: string[];
}
interface EnvAccepted {
  data: {
    deployment: Deployment;
    command: { id: string; name: string; url: string };
    env: { envVarNames: string[]; set: string[]; unset: string[] };
  };
}

/**
 * One variable changed without resending the others: the server opens the serving release's sealed values, merges
 * the change and ships it as a redeploy. The container's own environment (read from the engine) is the proof that
 * the values were kept or changed, since no route ever returns one.
 */
describe('PATCH /platform/deployments/{id}/env, the set_env tool and slipway env set/unset', () => {
  let h: Harness;
  let image: string;
  let token: string;
  const clients: Client[] = [];
  const { slipway } = cliUser(() => ({ baseUrl: h.baseUrl, token }));

  beforeAll(async () => {
    h = await startHarness('envpatch', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', DEPLOY_READY_TIMEOUT_S: '20' });
    token = (await h.newOrg('pro')).token;
    image = await buildFixtureImage(h.docker, 'env-hello');
  }, 300_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.stop();
  });

  const api = () => client(h, token);
  const get = async (id: string) => (await api().get<{ data: Deployment }>(`/platform/deployments/${id}`)).body.data;

  async function deploy(name: string, envVars: Record<string, string>): Promise<string> {
    const created = await api().post<{ data: { deployment: Deployment } }>('/platform/deployments', {
      image,
      name,
      port: 8080,
      envVars,
    });
    expect(created.status).toBe(202);
    const id = created.body.data.deployment.id;
    await eventually(async () => ((await get(id)).status === 'running' ? true : undefined), `${name} running`);
    return id;
  }

  /** The environment the serving release's container runs with, as the engine holds it (values included). */
  async function containerEnv(id: string): Promise<Record<string, string>> {
    const d = await get(id);
    const [c] = await h.docker.listContainers({
      filters: { label: [`${LABELS.deploymentId}=${id}`, `${LABELS.revision}=${d.revision}`] },
    });
    const env = (await h.docker.getContainer(c!.Id).inspect()).Config.Env ?? [];
    const pairs = env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)] as const);
    return Object.fromEntries(pairs.filter(([k]) => ['A', 'B', 'C', 'D'].includes(k)));
  }

  async function follow(url: string) {
    return eventually(async () => {
      const c = (await api().get<{ data: { state: string; message?: string } }>(url)).body.data;
      if (c.state === 'failed') throw new Error(`command failed: ${c.message}`);
      return c.state === 'succeeded' ? c : undefined;
    }, `command ${url}`);
  }

  it('sets B (new value) and C keeping A, then unsets A; answers name only; refuses bad bodies; 404 elsewhere', async () => {
    const id = await deploy('envpatch-http', { A: 'alpha', B: 'bravo' });
    expect(await containerEnv(id)).toEqual({ A: 'alpha', B: 'bravo' });

    const set = await api().call<EnvAccepted>('PATCH', `/platform/deployments/${id}/env`, {
      set: { B: 'bravo-2', C: 'charlie' },
    });
    expect(set.status).toBe(202);
    expect(set.body.data.env).toEqual({ envVarNames: ['A', 'B', 'C'], set: ['B', 'C'], unset: [] });
    expect(set.body.data.command).toMatchObject({ name: 'redeploy' });
    // Names only: no value anywhere in the answer.
    for (const v of ['alpha', 'bravo', 'charlie']) expect(JSON.stringify(set.body)).not.toContain(v);
    await follow(set.body.data.command.url);
    expect(await get(id)).toMatchObject({ status: 'running', revision: 2, envVarNames: ['A', 'B', 'C'] });
    expect(await containerEnv(id)).toEqual({ A: 'alpha', B: 'bravo-2', C: 'charlie' });

    const unset = await api().call<EnvAccepted>('PATCH', `/platform/deployments/${id}/env`, { unset: ['A'] });
    expect(unset.status).toBe(202);
    expect(unset.body.data.env).toEqual({ envVarNames: ['B', 'C'], set: [], unset: ['A'] });
    await follow(unset.body.data.command.url);
    expect((await get(id)).envVarNames).toEqual(['B', 'C']);
    expect(await containerEnv(id)).toEqual({ B: 'bravo-2', C: 'charlie' });

    const refusals: [unknown, RegExp][] = [
      [{}, /at least one variable to set .* or to remove/],
      [{ set: {}, unset: [] }, /at least one variable/],
      [{ set: { B: 'x' }, unset: ['B'] }, /B cannot be both set and removed/],
      [{ set: { 'BAD-NAME': 'x' } }, /environment variable name/],
      [{ unset: ['1X'] }, /environment variable name/],
      [{ unset: ['A'] }, /A is not set on deployment .*its variables are B, C/],
      [{ set: { B: 'x' }, extra: 1 }, /extra/],
    ];
    for (const [body, message] of refusals) {
      const r = await api().call<{ message: string }>('PATCH', `/platform/deployments/${id}/env`, body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
      expect(r.body.message).toMatch(message);
    }
    expect((await get(id)).revision).toBe(3);

    const other = client(h, (await h.newOrg('pro')).token);
    const foreign = await other.call<{ message: string }>('PATCH', `/platform/deployments/${id}/env`, {
      unset: ['B'],
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toMatch(/No deployment .* in this organisation/);
    expect((await get(id)).envVarNames).toEqual(['B', 'C']);
  });

  it('set_env through the SDK client waits for the release and answers as redeploy does', async () => {
    const id = await deploy('envpatch-mcp', { A: 'alpha', B: 'bravo' });
    const c = new Client({ name: 'envpatch-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(c);
    const tools = (await c.listTools()).tools;
    expect(tools.find((t) => t.name === 'set_env')?.inputSchema.properties).toMatchObject({
      set: expect.any(Object),
      unset: expect.any(Object),
    });
    const call = async (args: Record<string, unknown>) =>
      readResult(
        (await c.callTool({ name: 'set_env', arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult,
      );

    const changed = await call({ deploymentId: id, set: { B: 'bravo-2' }, unset: ['A'] });
    expect(changed.isError).toBe(false);
    expect(changed.s).toMatchObject({ state: 'succeeded', status: 'running', revision: 2 });
    expect(changed.text).not.toContain('bravo');
    expect(await containerEnv(id)).toEqual({ B: 'bravo-2' });

    const both = await call({ deploymentId: id, set: { B: 'x' }, unset: ['B'] });
    expect(both).toMatchObject({ isError: true, s: { code: 'INVALID_REQUEST' } });
    expect(both.s.message).toMatch(/B cannot be both set and removed/);
    const foreign = new Client({ name: 'envpatch-test', version: '1.0.0' });
    await foreign.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${(await h.newOrg('pro')).token}` } },
      }),
    );
    clients.push(foreign);
    await foreign.listTools();
    const notFound = readResult(
      (await foreign.callTool({ name: 'set_env', arguments: { deploymentId: id, set: { D: 'x' } } })) as CallToolResult,
    );
    expect(notFound.s).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });
  });

  it('slipway env set and unset change single variables and never print a value, --json included', async () => {
    const id = await deploy('envpatch-cli', { A: 'alpha', B: 'bravo' });
    const set = await slipway(['env', 'set', '--app', id, 'B=bravo-secret-2', 'C', '--wait'], {
      env: { C: 'charlie-from-shell' },
    });
    expect([set.code, set.stderr]).toEqual([0, expect.any(String)]);
    expect(set.stdout).toMatch(/B, C set: envpatch-cli is running release r2 with A, B, C/);
    const unset = await slipway(['env', 'unset', '-a', 'envpatch-cli', 'A', '--json']);
    expect(unset.code).toBe(0);
    const accepted = JSON.parse(unset.stdout) as EnvAccepted['data'];
    expect(accepted.env).toEqual({ envVarNames: ['B', 'C'], set: [], unset: ['A'] });
    await follow(accepted.command.url);
    for (const r of [set, unset])
      for (const v of ['alpha', 'bravo', 'charlie']) expect(r.stdout + r.stderr).not.toContain(v);
    expect(await containerEnv(id)).toEqual({ B: 'bravo-secret-2', C: 'charlie-from-shell' });

    const listed = await slipway(['env', 'list', id]);
    expect(listed.stdout.trim().split('\n')).toEqual(['B', 'C']);
    const missing = await slipway(['env', 'unset', '--app', id, 'A']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/A is not set/);
    const unshelled = await slipway(['env', 'set', '--app', id, 'NOT_IN_SHELL_XYZ']);
    expect(unshelled.code).not.toBe(0);
    expect(unshelled.stderr).toMatch(/NOT_IN_SHELL_XYZ: not set in this shell/);
  });
});
