import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { freePort, tcpOpen, waitUntil } from '@scripts/stack/process';

const run = promisify(execFile);

// The host's ~/.gitconfig and /etc/gitconfig (signing, hooks, init.defaultBranch) must not shape fixtures;
// fixed dates make the same files give the same commit SHAs on every run.
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
};
const AUTHOR = ['-c', 'user.name=Slipway Fixtures', '-c', 'user.email=fixtures@slipway.test'];
const REPO_NAME = /^[\w.-]+(\/[\w.-]+)*$/;

export interface RepoOptions {
  /** HTTP Basic auth with any username and this token as the password, as GitHub and GitLab accept. */
  private?: { token: string };
  branch?: string;
  /** Branches forked from the default one, each with these files written on top. */
  extraBranches?: Record<string, Record<string, string>>;
  /** Symlinks committed as such: path in the repo → target, verbatim. */
  symlinks?: Record<string, string>;
}

export type GitServer = Awaited<ReturnType<typeof startGitServer>>;
export type GitDaemon = Awaited<ReturnType<typeof startGitDaemon>>;

/**
 * A smart-HTTP Git server on loopback: git's own `git http-backend` as CGI behind node's http server,
 * so clones go through the same protocol (and auth challenge) as against a real forge.
 */
export async function startGitServer(opts: { host?: string } = {}) {
  const host = opts.host ?? '127.0.0.1';
  /** Every request, with the credentials it carried: tests prove a secret never reached this server. */
  const requests: { path: string; authorization?: string }[] = [];
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-git-'));
  const projectRoot = path.join(root, 'repos');
  await fs.mkdir(projectRoot);
  const tokens = new Map<string, string>();

  const server = http.createServer((req, res) => {
    requests.push({
      path: req.url ?? '/',
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    const repo = /^\/(.+?\.git)(?:\/|$)/.exec(new URL(req.url ?? '/', 'http://git.invalid').pathname)?.[1];
    const token = repo === undefined ? undefined : tokens.get(repo);
    const user = token === undefined ? undefined : basicAuthUser(req.headers.authorization, token);
    if (token !== undefined && user === undefined) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    gitHttpBackend(req, res, projectRoot, user);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  let daemon: Promise<GitDaemon> | undefined;

  return {
    url,
    requests,
    /** Where the bare repositories live; `startGitDaemon(projectRoot)` serves the public ones over git://. */
    projectRoot,
    /** Commits `files` (a fixture directory or name → content) as a fresh repo; returns its clone URL. */
    async addRepo(name: string, files: string | Record<string, string>, opts: RepoOptions = {}): Promise<string> {
      if (!REPO_NAME.test(name) || name.split('/').includes('..')) throw new Error(`bad repo name ${name}`);
      const branch = opts.branch ?? 'main';
      const work = await fs.mkdtemp(path.join(root, 'work-'));
      const git = (...args: string[]) => run('git', [...AUTHOR, ...args], { cwd: work, env: GIT_ENV });
      await git('init', '-q', '-b', branch);
      await writeFiles(work, files);
      for (const [at, to] of Object.entries(opts.symlinks ?? {})) await fs.symlink(to, path.join(work, at));
      await git('add', '-A');
      await git('commit', '-q', '--allow-empty', '-m', 'fixture');
      for (const [extra, extraFiles] of Object.entries(opts.extraBranches ?? {})) {
        await git('checkout', '-q', '-b', extra, branch);
        await writeFiles(work, extraFiles);
        await git('add', '-A');
        await git('commit', '-q', '--allow-empty', '-m', `fixture ${extra}`);
      }
      // The bare clone's HEAD follows the work repo's, so the default branch is what a plain clone gets.
      await git('checkout', '-q', branch);
      const bare = path.join(projectRoot, `${name}.git`);
      await fs.mkdir(path.dirname(bare), { recursive: true });
      await run('git', ['clone', '-q', '--bare', work, bare], { env: GIT_ENV });
      await fs.rm(work, { recursive: true, force: true });
      if (opts.private) tokens.set(`${name}.git`, opts.private.token);
      // git daemon has no auth: it only serves repos marked exportable, i.e. the public ones.
      else await fs.writeFile(path.join(bare, 'git-daemon-export-ok'), '');
      return `${url}/${name}.git`;
    },
    /**
     * Commits `files` on top of `branch` of a repo made by addRepo (as a push from a developer's clone would) and
     * returns the new commit's SHA.
     */
    async addCommit(name: string, files: Record<string, string>, branch = 'main'): Promise<string> {
      if (!REPO_NAME.test(name) || name.split('/').includes('..')) throw new Error(`bad repo name ${name}`);
      const work = await fs.mkdtemp(path.join(root, 'work-'));
      const git = (...args: string[]) => run('git', [...AUTHOR, ...args], { cwd: work, env: GIT_ENV });
      try {
        await run('git', ['clone', '-q', '--branch', branch, path.join(projectRoot, `${name}.git`), work], {
          env: GIT_ENV,
        });
        await writeFiles(work, files);
        await git('add', '-A');
        await git('commit', '-q', '--allow-empty', '-m', `change on ${branch}`);
        await git('push', '-q', 'origin', branch);
        return (await git('rev-parse', 'HEAD')).stdout.trim();
      } finally {
        await fs.rm(work, { recursive: true, force: true });
      }
    },
    /** A git:// daemon over the same repos (public ones only), started once and stopped with the server. */
    daemon(): Promise<GitDaemon> {
      daemon ??= startGitDaemon(projectRoot);
      return daemon;
    },
    async stop() {
      await (await daemon?.catch(() => undefined))?.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}

/** `git daemon` on a free loopback port for the repos under `projectRoot` that carry git-daemon-export-ok. */
export async function startGitDaemon(projectRoot: string) {
  const port = await freePort();
  const args = ['daemon', `--base-path=${projectRoot}`, '--listen=127.0.0.1', `--port=${port}`, '--reuseaddr'];
  const child = spawn('git', args, { env: GIT_ENV, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', resolve);
    child.once('error', () => resolve(-1));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitUntil('git daemon', () => tcpOpen(port), { timeoutMs: 10_000, proc: { exited, logFile: '/dev/null' } });
  } catch (err) {
    await stop();
    throw err;
  }
  const url = `git://127.0.0.1:${port}`;
  return { url, cloneUrl: (name: string) => `${url}/${name}.git`, stop };
}

/** The username of a Basic credential whose password is `token`, or undefined when it does not match. */
function basicAuthUser(header: string | undefined, token: string): string | undefined {
  const [scheme, encoded] = (header ?? '').split(' ');
  if (scheme?.toLowerCase() !== 'basic' || !encoded) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0 || decoded.slice(colon + 1) !== token) return undefined;
  return decoded.slice(0, colon);
}

/** Runs one request through `git http-backend` (RFC 3875 CGI): request in as env + stdin, response from stdout. */
function gitHttpBackend(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  projectRoot: string,
  remoteUser: string | undefined,
): void {
  const url = new URL(req.url ?? '/', 'http://git.invalid');
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const env: NodeJS.ProcessEnv = {
    ...GIT_ENV,
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: url.pathname,
    QUERY_STRING: url.search.slice(1),
    REQUEST_METHOD: req.method ?? 'GET',
    CONTENT_TYPE: header('content-type') ?? '',
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
  };
  // Without CONTENT_LENGTH (a chunked body) http-backend reads stdin to EOF, which piping the body gives it.
  const optional = {
    CONTENT_LENGTH: header('content-length'),
    // http-backend inflates a gzipped body itself when told the encoding.
    HTTP_CONTENT_ENCODING: header('content-encoding'),
    GIT_PROTOCOL: header('git-protocol'),
    REMOTE_USER: remoteUser,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) env[key] = value;

  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  // It may answer (a 404, say) without reading the body; the broken pipe that follows is not an error.
  child.stdin.on('error', () => undefined);
  req.pipe(child.stdin);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  res.once('close', () => child.kill());

  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = cgiHeaderEnd(head);
    if (!end) return;
    child.stdout.off('data', onData);
    const { status, headers } = parseCgiHeaders(head.subarray(0, end.at).toString('latin1'));
    res.writeHead(status, headers);
    res.write(head.subarray(end.at + end.length));
    child.stdout.pipe(res);
  };
  child.stdout.on('data', onData);
  child.once('close', (code) => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(502, { 'Content-Type': 'text/plain' });
    res.end(`git http-backend exited with ${code} before its headers: ${stderr}`);
  });
}

function cgiHeaderEnd(buf: Buffer): { at: number; length: number } | undefined {
  const found = [
    { at: buf.indexOf('\r\n\r\n'), length: 4 },
    { at: buf.indexOf('\n\n'), length: 2 },
  ].filter((e) => e.at >= 0);
  return found.sort((a, b) => a.at - b.at)[0];
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string | string[]> } {
  let status = 200;
  const headers: Record<string, string | string[]> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const [name, value] = [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else {
      const prior = headers[name];
      headers[name] = prior === undefined ? value : [prior, value].flat();
    }
  }
  return { status, headers };
}

async function writeFiles(dir: string, files: string | Record<string, string>): Promise<void> {
  if (typeof files === 'string') {
    await fs.cp(files, dir, { recursive: true });
    return;
  }
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, content);
  }
}
