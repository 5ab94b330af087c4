import { Command, InvalidArgumentError } from 'commander';

import { ConfigError } from '@shared/config';

import { registerAdmin } from './admin';
import { type Api, createApi } from './api';
import { envList, list, open, releases } from './commands/apps';
import { envSet, envUnset, redeploy, rollback, rollbackArgs, scale, scaleArgs, start, stop } from './commands/control';
import { deploy, type DeployOptions } from './commands/deploy';
import { link, unlink } from './commands/link';
import { login } from './commands/login';
import { logs, type LogsOptions } from './commands/logs';
import { destroy } from './commands/manage';
import { status } from './commands/status';
import { CliError } from './errors';
import { type Output, output } from './output';
import { resolveCredentials } from './settings';
import { resolveTarget, type Target } from './target';

interface ConnectionOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

interface WaitOptions extends ConnectionOptions {
  wait?: boolean;
  timeout: string;
}

const program = new Command('slipway')
  .description(
    'Deploy and manage apps on a Slipway server: slipway deploy in a folder creates its app the first time and ships ' +
      'a new release of it every time after; `slipway admin` holds the operator commands',
  )
  .showHelpAfterError();
let json = false;

/** Every API command takes the same three options; the token is better given by login or SLIPWAY_TOKEN than argv. */
function apiCommand(name: string, description: string, parent: Command = program): Command {
  return parent
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

/** A command on one deployment: the ID or name given, or else the one the folder is linked to. */
function onDeployment(
  o: ConnectionOptions,
  given: string | undefined,
  fn: (api: Api, out: Output, target: Target) => Promise<void>,
): Promise<void> {
  return withApi(o, async (api, out) => fn(api, out, await resolveTarget(api, given)));
}

const TARGET = 'deployment ID or name (default: the one this folder is linked to)';
const ENV_REPLACES =
  'environment variable, repeatable; a bare KEY takes its value from this shell. On an existing app --env replaces ' +
  'the whole environment (variables not given are removed; slipway env list shows the names); without it the ' +
  'environment stays as it is';
const collect = (v: string, acc: string[]) => [...acc, v];
const waitOptions = (c: Command, what: string, timeout: string) =>
  c
    .option('--wait', `follow the ${what} until it has succeeded or failed: its status changes and build lines`)
    .option('--timeout <duration>', 'how long --wait follows, e.g. 90s, 15m', timeout);

apiCommand('login', 'check an access token and save it with the API address in your config dir (0600)').action(
  (o: ConnectionOptions) => {
    json = Boolean(o.json);
    return login(output(json), o);
  },
);

apiCommand(
  'deploy',
  'deploy this folder (or --dir, --image, --git): the first time it creates the app and links the folder to it ' +
    '(.slipway/app.json); in a linked folder it ships a new release of the same app, at the same URL',
)
  .option('--image <ref>', 'a container image the server has or can pull')
  .option(
    '--dir <path>',
    'the folder to deploy (default: this one); what its .gitignore and .dockerignore exclude stays here',
  )
  .option('--git [url]', "a Git repository URL; in a linked folder --git alone rebuilds the app's own repository")
  .option('--branch <name>', "branch of --git (the app's own, or the repository's default branch, otherwise)")
  .option('--dockerfile <path>', 'Dockerfile of the folder or --git, relative to its root (detected otherwise)')
  .option(
    '--name <name>',
    "deployment name: lowercase letters, digits and - (default: the folder's, image's or repository's)",
  )
  .option('--port <port>', 'port the app listens on (default 8080); set when the app is created')
  .option('--env <KEY=VALUE>', ENV_REPLACES, collect, [] as string[])
  .option('--new', 'create a new app even in a linked folder, and link the folder to it (the old app keeps running)')
  .option('--request-id <key>', 'idempotency key: a retry with the same key starts nothing new')
  .option('--wait', 'follow it until it runs or fails: build lines as they come, then the outcome')
  .option('--timeout <duration>', 'how long --wait follows, e.g. 90s, 15m, 1h', '15m')
  .action((o: DeployOptions & ConnectionOptions) => withApi(o, (api, out) => deploy(api, out, o)));

apiCommand('link', 'link this folder to an existing deployment: later commands here act on it without an ID')
  .argument('<target>', 'deployment ID or name (a name several deployments share is refused, with them listed)')
  .option('--dir <path>', 'the folder to link (default: this one)')
  .action((given: string, o: ConnectionOptions & { dir?: string }) =>
    withApi(o, (api, out) => link(api, out, given, o)),
  );

program
  .command('unlink')
  .description("remove this folder's link (.slipway/app.json); the deployment itself stays as it is")
  .option('--dir <path>', 'the folder to unlink (default: this one)')
  .option('--json', 'print one JSON document on stdout')
  .action((o: { dir?: string; json?: boolean }) => {
    json = Boolean(o.json);
    return unlink(output(json), o);
  });

apiCommand('list', 'the deployments this token can see, newest first (* marks the one this folder is linked to)')
  .option('--limit <n>', 'how many, 1 to 100', '20')
  .action((o: ConnectionOptions & { limit: string }) => withApi(o, (api, out) => list(api, out, o)));

apiCommand('open', "print a deployment's URL, and open it in the browser when run on a terminal")
  .argument('[target]', TARGET)
  .action((given: string | undefined, o: ConnectionOptions) =>
    onDeployment(o, given, (api, out, t) => open(api, out, t)),
  );

apiCommand('status', "a deployment's status, URL, env names, releases and events")
  .argument('[target]', TARGET)
  .action((given: string | undefined, o: ConnectionOptions) =>
    onDeployment(o, given, (api, out, t) => status(api, out, t)),
  );

apiCommand('logs', "a deployment's last log lines (build, system, app)")
  .argument('[target]', TARGET)
  .option('-f, --follow', 'keep printing new lines, on the event stream, until it is destroyed (Ctrl-C stops)')
  .option('--build', "only the build's output")
  .option('--system', "only Slipway's notices")
  .option('--app', "only the app's own output")
  .option('--limit <n>', 'how many of the last lines, 1 to 1000', '100')
  .action((given: string | undefined, o: ConnectionOptions & LogsOptions) =>
    onDeployment(o, given, (api, out, t) => logs(api, out, t, o)),
  );

apiCommand('releases', "a deployment's releases, newest first: what rollback can go back to")
  .argument('[target]', TARGET)
  .option('--limit <n>', 'how many, 1 to 100', '20')
  .action((given: string | undefined, o: ConnectionOptions & { limit: string }) =>
    onDeployment(o, given, (api, out, t) => releases(api, out, t, o)),
  );

waitOptions(
  apiCommand('rollback', 'go back to an earlier release (by default the last healthy one)')
    .argument('[target]', TARGET)
    .argument('[revision]', 'the release to go back to, 3 or r3 (slipway releases lists them)')
    .option('--revision <n>', 'the same as the revision argument'),
  'rollback',
  '10m',
).action((first: string | undefined, second: string | undefined, o: WaitOptions & { revision?: string }) => {
  const { given, revision } = rollbackArgs(first, second, o.revision);
  return onDeployment(o, given, (api, out, t) => rollback(api, out, t, revision, o));
});

waitOptions(
  apiCommand(
    'redeploy',
    "a new release: an image app's image pulled again, a Git app's repository rebuilt, or with --env a new environment",
  )
    .argument('[target]', TARGET)
    .option('--env <KEY=VALUE>', ENV_REPLACES, collect, [] as string[]),
  'redeploy',
  '15m',
).action((given: string | undefined, o: WaitOptions & { env: string[] }) =>
  onDeployment(o, given, (api, out, t) => redeploy(api, out, t, o)),
);

const env = program
  .command('env')
  .description(
    "a deployment's environment: names only, values are never shown. set and unset change the variables named " +
      'and keep every other one, as a new release at the same URL',
  );
apiCommand('list', 'the names of the environment variables', env)
  .argument('[target]', TARGET)
  .action((given: string | undefined, o: ConnectionOptions) =>
    onDeployment(o, given, (api, out, t) => envList(api, out, t)),
  );
waitOptions(
  apiCommand('set', 'add or change these variables, keeping the others; values are never printed', env)
    .argument('<KEY=VALUE...>', 'the variables; a bare KEY takes its value from this shell')
    .option('-a, --app <target>', TARGET),
  'new release',
  '15m',
).action((pairs: string[], o: WaitOptions & { app?: string }) =>
  onDeployment(o, o.app, (api, out, t) => envSet(api, out, t, pairs, o)),
);
waitOptions(
  apiCommand('unset', 'remove these variables, keeping the others', env)
    .argument('<KEY...>', 'the names to remove')
    .option('-a, --app <target>', TARGET),
  'new release',
  '15m',
).action((names: string[], o: WaitOptions & { app?: string }) =>
  onDeployment(o, o.app, (api, out, t) => envUnset(api, out, t, names, o)),
);

waitOptions(
  apiCommand('stop', 'stop every instance; the URL answers 503 until start').argument('[target]', TARGET),
  'stop',
  '5m',
).action((given: string | undefined, o: WaitOptions) => onDeployment(o, given, (api, out, t) => stop(api, out, t, o)));

waitOptions(
  apiCommand('start', 'start a stopped deployment again: the same release, the same URL').argument('[target]', TARGET),
  'start',
  '10m',
).action((given: string | undefined, o: WaitOptions) => onDeployment(o, given, (api, out, t) => start(api, out, t, o)));

waitOptions(
  apiCommand('scale', 'run N instances of the serving release (0 stops it)')
    .argument('[target]', TARGET)
    .argument('[replicas]', 'the number of instances (with one argument, it is this)'),
  'scale',
  '10m',
).action((first: string | undefined, second: string | undefined, o: WaitOptions) => {
  const { given, replicas } = scaleArgs(first, second);
  return onDeployment(o, given, (api, out, t) => scale(api, out, t, replicas, o));
});

apiCommand('destroy', 'destroy a deployment for good (asks you to type its name unless --yes)')
  .argument('[target]', TARGET)
  .option('-y, --yes', 'do not ask')
  .action((given: string | undefined, o: ConnectionOptions & { yes?: boolean }) =>
    onDeployment(o, given, (api, out, t) => destroy(api, out, t, o)),
  );

registerAdmin(program);
// The MCP tools over stdio for a local agent (api/mcp/stdio.ts): loaded only for this command, it composes the api.
program
  .command('mcp')
  .description("serve Slipway's MCP tools over stdio (token in SLIPWAY_TOKEN; the api's own configuration)")
  .action(async () => (await import('@api/mcp/stdio.js')).serveStdio().then(() => process.exit(0)));

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
