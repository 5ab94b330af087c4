import { Command, InvalidArgumentError } from 'commander';

import { ConfigError } from '../shared/config';
import { registerAdmin } from './admin';
import { type Api, createApi } from './api';
import { deploy, type DeployOptions } from './commands/deploy';
import { login } from './commands/login';
import { logs } from './commands/logs';
import { destroy, rollback } from './commands/manage';
import { status } from './commands/status';
import { CliError } from './errors';
import { type Output, output } from './output';
import { resolveCredentials } from './settings';

interface ConnectionOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

const program = new Command('slipway')
  .description('Deploy and manage apps on a Slipway server; `slipway admin` holds the operator commands')
  .showHelpAfterError();
let json = false;

/** Every API command takes the same three options; the token is better given by login or SLIPWAY_TOKEN than argv. */
function apiCommand(name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .option('--url <url>', 'API address (default: SLIPWAY_URL, then what slipway login saved)')
    .option('--token <token>', 'access token (default: SLIPWAY_TOKEN, then what slipway login saved)')
    .option('--json', 'print one JSON document on stdout');
}

async function withApi(o: ConnectionOptions, fn: (api: Api, out: Output) => Promise<void>): Promise<void> {
  json = Boolean(o.json);
  const api = createApi(await resolveCredentials(o));
  await fn(api, output(json));
}

apiCommand('login', 'check an access token and save it with the API address in your config dir (0600)').action(
  (o: ConnectionOptions) => {
    json = Boolean(o.json);
    return login(output(json), o);
  },
);

apiCommand('deploy', 'deploy an image, a directory (--dir, zipped and uploaded) or a Git repository')
  .option('--image <ref>', 'a container image the server has or can pull')
  .option('--dir <path>', 'a directory; what its .gitignore and .dockerignore exclude stays here')
  .option('--git <url>', 'a Git repository URL')
  .option('--branch <name>', 'branch of --git (its default branch otherwise)')
  .option('--dockerfile <path>', 'Dockerfile of --dir or --git, relative to its root (detected otherwise)')
  .requiredOption('--name <name>', 'deployment name: lowercase letters, digits and -')
  .option('--port <port>', 'port the app listens on', '8080')
  .option(
    '--env <KEY=VALUE>',
    'environment variable, repeatable; a bare KEY takes its value from this shell',
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  )
  .option('--request-id <key>', 'idempotency key: a retry with the same key starts nothing new')
  .option('--wait', 'follow it until it runs or fails: live progress on a terminal, plain lines otherwise')
  .option('--timeout <duration>', 'how long --wait follows, e.g. 90s, 15m, 1h', '15m')
  .action((o: DeployOptions & ConnectionOptions) => withApi(o, (api, out) => deploy(api, out, o)));

apiCommand('status', "a deployment's status, URL, env names, releases and events")
  .argument('<id>', 'deployment ID')
  .action((id: string, o: ConnectionOptions) => withApi(o, (api, out) => status(api, out, id)));

apiCommand('logs', "a deployment's last log lines (build, system, app)")
  .argument('<id>', 'deployment ID')
  .option('-f, --follow', 'keep printing new lines until it is destroyed (Ctrl-C stops)')
  .option('--limit <n>', 'how many of the last lines, 1 to 1000', '100')
  .action((id: string, o: ConnectionOptions & { follow?: boolean; limit: string }) =>
    withApi(o, (api, out) => logs(api, out, id, o)),
  );

apiCommand('rollback', 'go back to an earlier release (by default the last healthy one)')
  .argument('<id>', 'deployment ID')
  .option('--revision <n>', 'the release to go back to (slipway status lists them)')
  .option('--wait', 'follow the rollback until the release serves or the rollback fails')
  .option('--timeout <duration>', 'how long --wait follows, e.g. 90s, 15m', '10m')
  .action((id: string, o: ConnectionOptions & { revision?: string; wait?: boolean; timeout: string }) =>
    withApi(o, (api, out) => rollback(api, out, id, o)),
  );

apiCommand('destroy', 'destroy a deployment for good (asks you to type its name unless --yes)')
  .argument('<id>', 'deployment ID')
  .option('-y, --yes', 'do not ask')
  .action((id: string, o: ConnectionOptions & { yes?: boolean }) => withApi(o, (api, out) => destroy(api, out, id, o)));

registerAdmin(program);
// The MCP tools over stdio for a local agent (api/mcp/stdio.ts): loaded only for this command, it composes the api.
program
  .command('mcp')
  .description("serve Slipway's MCP tools over stdio (token in SLIPWAY_TOKEN; the api's own configuration)")
  .action(async () => (await import('../api/mcp/stdio.js')).serveStdio().then(() => process.exit(0)));

program.parseAsync().catch((err: unknown) => {
  if (err instanceof CliError) {
    // --json: the failure is a JSON document too (the API's error body, or the failed deployment).
    if (json && err.json !== undefined) process.stdout.write(`${JSON.stringify(err.json, null, 2)}\n`);
    console.error(`slipway: ${err.message}${err.next ? `\n  next: ${err.next}` : ''}`);
    process.exit(err.exitCode);
  }
  const message =
    err instanceof ConfigError || err instanceof InvalidArgumentError
      ? err.message
      : err instanceof Error
        ? err.message
        : String(err);
  console.error(`slipway: ${message}`);
  process.exit(1);
});
