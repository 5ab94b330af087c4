import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { cacheDir } from '@scripts/stack/paths';
import { ifAbsent } from '@shared/ignore';

const run = promisify(execFile);

/**
 * Validators for the deployment files (docker-compose.temporal.yml, examples/kubernetes/), with nothing fetched but
 * packages from their registries: `docker compose` is not on every machine, and kubeconform downloads its schemas.
 */

/** Bundles the JSON schemas of each Kubernetes version, so validation needs no network once installed. */
export const KUBERNETES_VALIDATE_VERSION = '1.37.0';
/** The Compose specification's JSON schema ships in compose-go's module (schema/compose-spec.json). */
export const COMPOSE_GO_VERSION = 'v2.16.2';

const exists = (file: string) => fs.access(file).then(() => true, ifAbsent(false));

/** The venv's python with kubernetes-validate (and its jsonschema and PyYAML), installed from PyPI once. */
export async function ensureValidatorPython(): Promise<string> {
  const dir = path.join(cacheDir(), 'tools', `kubernetes-validate-${KUBERNETES_VALIDATE_VERSION}`);
  const python = path.join(dir, 'bin', 'python');
  if (await exists(path.join(dir, 'installed'))) return python;
  // Built beside its place and renamed into it, so a concurrent run never sees half a venv.
  const work = `${dir}.${process.pid}.tmp`;
  await fs.rm(work, { recursive: true, force: true });
  await fs.mkdir(path.dirname(dir), { recursive: true });
  try {
    await run('python3', ['-m', 'venv', work]);
    await run(
      path.join(work, 'bin', 'python'),
      ['-m', 'pip', 'install', '--quiet', '--no-input', `kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}`],
      { maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 },
    );
    await fs.writeFile(path.join(work, 'installed'), `${KUBERNETES_VALIDATE_VERSION}\n`);
    await fs.rename(work, dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    });
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  return python;
}

/** compose-spec.json from the Go module cache, downloading the module through the module proxy when absent. */
export async function composeSpecSchema(): Promise<string> {
  const { stdout } = await run(
    'go',
    ['mod', 'download', '-json', `github.com/compose-spec/compose-go/v2@${COMPOSE_GO_VERSION}`],
    {
      // Outside any module, so no go.mod is read or written; GOTOOLCHAIN=local as every go command of the stack.
      cwd: os.tmpdir(),
      env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
      timeout: 5 * 60_000,
    },
  );
  const { Dir } = JSON.parse(stdout) as { Dir: string };
  return path.join(Dir, 'schema', 'compose-spec.json');
}

/** The schema's complaints about a Compose document (already interpolated), each as `path: message`; none when valid. */
export async function composeSchemaErrors(doc: unknown): Promise<string[]> {
  const [python, schema] = await Promise.all([ensureValidatorPython(), composeSpecSchema()]);
  const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-compose-')), 'compose.json');
  await fs.writeFile(file, JSON.stringify(doc));
  try {
    const { stdout } = await run(python, [
      '-c',
      [
        'import json, sys',
        'from jsonschema import Draft202012Validator',
        'v = Draft202012Validator(json.load(open(sys.argv[1])))',
        'for e in v.iter_errors(json.load(open(sys.argv[2]))):',
        '    print("/".join(map(str, e.absolute_path)) + ": " + e.message)',
      ].join('\n'),
      schema,
      file,
    ]);
    return stdout.split('\n').filter(Boolean);
  } finally {
    await fs.rm(path.dirname(file), { recursive: true, force: true });
  }
}

/** Compose's interpolation: `$$`, `${V}`, `${V:-default}`, `${V-default}`, `${V:?error}`, `${V?error}`. */
export function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g,
    (whole, name?: string, colon?: string, op?: string, arg?: string) => {
      if (whole === '$$') return '$';
      const value = env[name!];
      const missing = value === undefined || (colon === ':' && value === '');
      if (op === '-') return missing ? arg! : value!;
      if (op === '?' && missing) throw new Error(`required variable ${name} is missing a value: ${arg}`);
      return value ?? '';
    },
  );
}

/** kubernetes-validate's verdict on manifest files, strict (unknown fields refused), for one Kubernetes version. */
export async function validateKubernetes(files: string[], version: string) {
  const python = await ensureValidatorPython();
  return run(python, ['-m', 'kubernetes_validate', '--strict', '--no-warn', '-k', version, ...files]).then(
    ({ stdout, stderr }) => ({ ok: true, output: stdout + stderr }),
    (err: Error & { stdout?: string; stderr?: string }) => ({
      ok: false,
      output: `${err.stdout ?? ''}${err.stderr ?? err.message}`,
    }),
  );
}

/** The documents of a YAML text, parsed by PyYAML in the validators' venv (the project has no YAML package of its own). */
export async function parseYaml(text: string): Promise<unknown[]> {
  const python = await ensureValidatorPython();
  const child = execFile(
    python,
    ['-c', 'import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))'],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const out = new Promise<string>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`YAML refused: ${stderr.trim()}`))));
  });
  child.stdin!.end(text);
  return JSON.parse(await out) as unknown[];
}
