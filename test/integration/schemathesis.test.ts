import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { ensureSchemathesis } from '@scripts/stack/schemathesis';

import { type Harness, startHarness } from '../helpers/harness';

const execFileAsync = promisify(execFile);

/** Bounded: a few examples per operation and a wall-clock cap, so the suite's time stays predictable. */
const MAX_EXAMPLES = 5;
const MAX_TIME_S = 180;
const HOOKS = path.join(__dirname, '..', 'helpers', 'schemathesis_hooks.py');
const CONFIG = path.join(__dirname, '..', 'helpers', 'schemathesis.toml');

/**
 * Schemathesis reads /openapi.json and calls every operation of both origins with generated requests, valid and
 * invalid, as an owner with every scope: any server error, undocumented status, response that breaks its schema,
 * wrong content type, invalid request accepted or valid request refused is a mismatch between the document and the
 * code, and fails this test. The refusals of valid requests it lets pass (a host that does not resolve, an ID that
 * names nothing) are listed with why in test/helpers/schemathesis_hooks.py; its settings in schemathesis.toml there.
 */
describe('schemathesis against the OpenAPI document', () => {
  let h: Harness;
  /** The api's error lines (500s with their cause), printed when a run fails. */
  const serverErrors: string[] = [];
  let python: string;
  let reportDir: string;

  beforeAll(async () => {
    python = await ensureSchemathesis();
    reportDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-schemathesis-'));
    h = await startHarness(
      'schemathesis',
      {
        // Every budget raised: a 429 passes every check and hides what the operation would have answered, and one
        // operation may get a few hundred cases. The budgets themselves are tested in rate-limits.test.ts.
        RATE_LIMIT_PLATFORM_PER_15MIN: '1000000',
        RATE_LIMIT_PLATFORM_REFUSED_PER_15MIN: '1000000',
        RATE_LIMIT_COMPAT_READS_PER_MIN: '1000000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '1000000',
        RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '1000000',
        RATE_LIMIT_DOMAIN_VERIFY_PER_5MIN: '1000000',
        RATE_LIMIT_ENTITLEMENTS_PER_MIN: '1000000',
        QUOTA_MULTIPLIER: '100000',
        ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        // No worker runs: resend and test answer 202 queued after this wait.
        SALES_ATTEMPT_WAIT_MS: '3000',
        // Nor does any deployment command: it is answered 202 after this wait, as with a worker that is down.
        DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS: '2000',
        // Nor any builder turn: a message is answered 202 (running, follow it) after this wait.
        BUILDER_MESSAGE_WAIT_S: '2',
        // Nor any question to a database source: answered 202 (running, read it later) after this wait.
        SOURCE_ASK_WAIT_S: '2',
        LOG_LEVEL: 'error',
      },
      // Deploys stay queued: what is checked is the HTTP contract, not the engine. The api's errors are kept, so a
      // failing run says why a request it names was answered 500, not only that it was.
      { worker: false, logDestination: { write: (line: string) => void serverErrors.push(line) } },
    );
  }, 15 * 60_000);
  afterAll(async () => {
    await h?.stop();
    if (reportDir) await fs.rm(reportDir, { recursive: true, force: true });
  });

  /**
   * One bounded run over the operations whose path matches `include`. `auth`: a bearer credential sent as it is, or
   * an owner's token that mints a token per operation (test/helpers/schemathesis_hooks.py).
   */
  async function schemathesis(
    name: string,
    auth: { bearer: string } | { mintWith: string },
    include: string,
    maxTimeS: number,
  ) {
    const junit = path.join(reportDir, `${name}.xml`);
    const log429 = path.join(reportDir, `${name}.429.jsonl`);
    const statsFile = path.join(reportDir, `${name}.stats.json`);
    const args = [
      '-m',
      'schemathesis.cli',
      '--config-file',
      CONFIG,
      'run',
      `${h.baseUrl}/openapi.json`,
      ...('bearer' in auth ? ['--header', `Authorization: Bearer ${auth.bearer}`] : []),
      '--include-path-regex',
      include,
      '--checks',
      [
        'not_a_server_error',
        'status_code_conformance',
        'content_type_conformance',
        'response_schema_conformance',
        'response_headers_conformance',
        'positive_data_acceptance',
        'negative_data_rejection',
        'ignored_auth',
        'missing_required_header',
        'unsupported_method',
        'allow_header_conformance',
      ].join(','),
      '--phases',
      'examples,coverage,fuzzing',
      '--max-examples',
      String(MAX_EXAMPLES),
      '--max-time',
      String(maxTimeS),
      '--seed',
      '1',
      // A builder sandbox sync answers when its container serves the head (a new container, an install): that can
      // pass 30 s on a loaded 2-core machine, and is a slow answer, not a wrong one.
      '--request-timeout',
      '120',
      '--workers',
      '2',
      '--no-color',
      '--report',
      'junit',
      '--report-junit-path',
      junit,
    ];
    const run = await execFileAsync(python, args, {
      // Schemathesis keeps its example database in the working directory: the run's own, not the repository.
      cwd: reportDir,
      maxBuffer: 64 * 1024 * 1024,
      timeout: (maxTimeS + 120) * 1000,
      env: {
        ...process.env,
        SCHEMATHESIS_TELEMETRY: 'false',
        NO_COLOR: '1',
        ...('mintWith' in auth
          ? {
              SCHEMATHESIS_HOOKS: HOOKS,
              SLIPWAY_ST_BASE_URL: h.baseUrl,
              SLIPWAY_ST_TOKEN: auth.mintWith,
              SLIPWAY_ST_429_LOG: log429,
              SLIPWAY_ST_STATS: statsFile,
            }
          : {}),
      },
    }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        code: err.code ?? -1,
        out: (err.stdout ?? '') + (err.stderr ?? ''),
      }),
    );
    const report = await fs.readFile(junit, 'utf8').catch(() => '');
    const refused = (await fs.readFile(log429, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const stats = await fs.readFile(statsFile, 'utf8').catch(() => '');
    const operations = [...report.matchAll(/<testcase /g)].length;
    const failing = [...report.matchAll(/<failure/g)].length;
    const summary = run.out.split('\n').filter((l) => /passed|failed|errored|generated/i.test(l));
    // The figures the issue asks for (operations, cases, failures), printed with every run.
    console.log(
      `schemathesis ${name}: exit ${run.code}; ${operations} operations, ${failing} failing ${stats}\n${summary.join('\n')}`,
    );
    if (run.code === 0) return { code: run.code, operations, refused, failures: '', apiErrors: [] as string[] };
    console.log(run.out.slice(-60_000));
    // What failed travels in the assertion itself, so a CI log that keeps only the summary of failing tests still
    // names each failing request and, for a 500, the api's own account of it.
    const failuresAt = run.out.search(/=+ FAILURES =+/);
    const summaryAt = run.out.search(/=+ SUMMARY =+/);
    const failures =
      failuresAt >= 0
        ? run.out.slice(failuresAt, summaryAt > failuresAt ? summaryAt : undefined)
        : run.out.slice(-4_000);
    const apiErrors = serverErrors.filter((l) => /"level":50/.test(l)).map((l) => l.slice(0, 2_000));
    return { code: run.code, operations, refused, failures: failures.slice(0, 8_000), apiErrors: apiErrors.slice(-5) };
  }

  it(
    'finds no server error, undocumented status, schema violation, wrong content type or refused valid request on either origin',
    async () => {
      const org = await h.newOrg('enterprise');
      const run = await schemathesis('origins', { mintWith: org.token }, '^/(compat|platform)/', MAX_TIME_S);
      expect(run.operations).toBeGreaterThanOrEqual(26);
      // A 429 passes every check and hides what the operation would have answered.
      expect(run.refused).toEqual([]);
      expect({ exit: run.code, failures: run.failures, apiErrors: run.apiErrors }).toEqual({
        exit: 0,
        failures: '',
        apiErrors: [],
      });
    },
    (MAX_TIME_S + 180) * 1000,
  );

  it('finds none on the entitlement lookup either, with a seller API key', async () => {
    const org = await h.newOrg('enterprise');
    const key = await fetch(`${h.baseUrl}/platform/sales/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}` },
    });
    const { apiKey } = ((await key.json()) as { data: { apiKey: string } }).data;
    const run = await schemathesis('entitlements', { bearer: apiKey }, '^/api/v1/entitlements', 30);
    expect(run.operations).toBe(1);
    expect({ exit: run.code, failures: run.failures, apiErrors: run.apiErrors }).toEqual({
      exit: 0,
      failures: '',
      apiErrors: [],
    });
  }, 240_000);
});
