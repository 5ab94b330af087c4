import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../ignore';
import { type LookupAll, OutboundTargetError, type ResolvedTarget, resolveTarget } from '../net-guard';
import { hardenedGit, pinnedAddress } from './git-hardening';

/** A clone that could not be made, with a message fit for the deployment's log and error (never the token). */
export class GitError extends Error {
  override name = 'GitError';
}

export interface CloneOptions {
  url: string;
  /** Absent: the repository's default branch. */
  branch?: string;
  /** A full commit SHA: exactly this commit is fetched (shallow) and checked out, whatever `branch` says. */
  commit?: string;
  /** Sent as HTTP basic auth (`x-access-token:<token>`), the form GitHub, GitLab and Gitea all accept. */
  token?: string;
  dest: string;
  maxBytes: number;
  allowPrivateHosts: boolean;
  /** How the host is resolved (tests stand in a resolver for DNS they cannot control). */
  lookup?: LookupAll;
  signal: AbortSignal;
  log: (line: string) => void;
}

async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true }).catch(ifAbsent([]));
  for (const e of entries) {
    if (!e.isFile()) continue;
    total += await fs.stat(path.join(e.parentPath, e.name)).then((s) => s.size, ifAbsent(0));
  }
  return total;
}

/**
 * What a builder push or import met, in our words; statuses matched as words, as for a clone (a URL's port such
 * as 127.0.0.1:40195 is not a 401).
 */
export function explainPushFailure(url: string, out: string): string {
  if (/Authentication failed|could not read Username|\b40[13]\b/i.test(out))
    return `the repository ${url} refused the credentials; pass tokenSecretId with a token that can write to it`;
  if (/not found|does not appear to be a git repository|\b404\b/i.test(out)) return `no repository at ${url}`;
  if (/Could not resolve host|Failed to connect|Connection refused/i.test(out)) return `cannot connect to ${url}`;
  return `git failed on ${url}: ${out.trim().split('\n').filter(Boolean).slice(-1).join('')}`;
}

/**
 * Turns git's stderr into what the caller did wrong, in our words. HTTP statuses are matched as words: a URL's
 * port (127.0.0.1:40195) must not read as a 401.
 */
export function explainCloneFailure(
  stderr: string,
  opts: Pick<CloneOptions, 'url' | 'branch' | 'commit' | 'token'>,
): string {
  if (opts.commit && /not our ref|couldn't find remote ref|no such remote ref|unadvertised object/i.test(stderr))
    return `the commit ${opts.commit} is not in ${opts.url} (push it first, or give the full SHA of a commit it has)`;
  const branch = opts.branch ? /Remote branch .* not found|couldn't find remote ref/i.test(stderr) : false;
  if (branch) return `the branch "${opts.branch}" does not exist in ${opts.url}`;
  if (/Authentication failed|could not read Username|terminal prompts disabled|\b40[13]\b/i.test(stderr)) {
    return opts.token
      ? `the repository ${opts.url} refused the token from gitTokenSecretId; check that it is valid and can read the repository`
      : `the repository ${opts.url} needs credentials: store a token with POST /platform/secrets and pass its id as gitTokenSecretId`;
  }
  if (/not found|does not appear to be a git repository|\b404\b/i.test(stderr)) {
    return `no repository at ${opts.url} (a private repository also needs gitTokenSecretId)`;
  }
  if (/Could not resolve host|unable to look up/i.test(stderr)) return `the host of ${opts.url} does not resolve`;
  if (/Connection refused|Failed to connect|unable to connect/i.test(stderr)) return `cannot connect to ${opts.url}`;
  const last = stderr.trim().split('\n').filter(Boolean).slice(-2).join(' | ');
  return `git clone of ${opts.url} failed: ${last || 'no output'}`;
}

/**
 * A shallow clone of one branch (or one commit) into `dest`, then its `.git` removed (the build needs the files only).
 * The host is checked against private networks first; the token travels in git's environment, never its
 * arguments, and is scrubbed from anything git prints. Returns the commit that was cloned.
 */
export async function cloneRepository(opts: CloneOptions): Promise<{ commit: string }> {
  const url = new URL(opts.url);
  // Resolved once and pinned: git connects to the address that was checked, so a name that resolves to a public
  // address for the check and a private one for the connection (DNS rebinding) gets nowhere.
  let target: ResolvedTarget;
  try {
    target = await resolveTarget(url, { allowPrivate: opts.allowPrivateHosts, lookup: opts.lookup });
  } catch (err) {
    if (!(err instanceof OutboundTargetError)) throw err;
    const off = err.openable ? ' (ALLOW_PRIVATE_GIT_HOSTS is off)' : '';
    throw new GitError(`refusing to clone ${opts.url}: ${err.reason}${off}`);
  }
  const pinned = pinnedAddress(target);
  // git:// has no curl underneath: connect to the address itself (the daemon ignores the host it is told).
  const cloneUrl = url.protocol === 'git:' ? Object.assign(new URL(url), { hostname: pinned }).toString() : opts.url;
  const git = hardenedGit({ target, home: opts.dest, token: opts.token });
  const { env, scrub } = git;

  const checkout = path.join(opts.dest, 'src');

  /** Runs git with the size watch and the caller's abort; resolves to what it wrote on stderr. */
  const run = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn('git', args, { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      let output = '';
      let stopped: string | undefined;
      const stop = (why: string) => {
        stopped ??= why;
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL'); // git and its remote helper
        } catch {
          /* already gone */
        }
      };
      const onAbort = () => stop('aborted');
      opts.signal.addEventListener('abort', onAbort, { once: true });
      const sizeWatch = setInterval(() => {
        void treeBytes(opts.dest).then((bytes) => {
          if (bytes > opts.maxBytes) stop(`the repository is larger than the ${opts.maxBytes}-byte clone limit`);
        });
      }, 500);
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d: string) => {
        output += d;
        if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
      });
      child.once('error', (err) => {
        clearInterval(sizeWatch);
        reject(new GitError(`cannot run git: ${err.message}`));
      });
      child.once('close', (code) => {
        clearInterval(sizeWatch);
        opts.signal.removeEventListener('abort', onAbort);
        if (stopped === 'aborted')
          reject(opts.signal.reason instanceof Error ? opts.signal.reason : new Error('aborted'));
        else if (stopped) reject(new GitError(stopped));
        else if (code !== 0) reject(new GitError(scrub(explainCloneFailure(output, opts))));
        else resolve(output);
      });
    });

  let stderr: string;
  if (opts.commit) {
    // One commit, by its SHA: an empty repository (no template, so no hooks) fetches it alone and checks it out.
    opts.log(`$ git fetch --depth=1 ${opts.url} ${opts.commit}`);
    await run(['init', '-q', '--template=', checkout]);
    stderr = await run([
      '-C',
      checkout,
      ...git.args,
      'fetch',
      '--depth=1',
      '--no-tags',
      '--progress',
      '--',
      cloneUrl,
      opts.commit,
    ]);
    await run(['-C', checkout, ...git.args, 'checkout', '-q', '--detach', 'FETCH_HEAD']);
  } else {
    opts.log(`$ git clone --depth=1 ${opts.branch ? `--branch ${opts.branch} ` : ''}${opts.url}`);
    stderr = await run([
      ...git.args,
      'clone',
      '--depth=1',
      '--single-branch',
      '--no-tags',
      '--progress',
      ...(opts.branch ? ['--branch', opts.branch] : []),
      '--',
      cloneUrl,
      checkout,
    ]);
  }
  // The watch above samples; a clone that finished between two samples is measured once more here.
  if ((await treeBytes(opts.dest)) > opts.maxBytes) {
    throw new GitError(`the repository is larger than the ${opts.maxBytes}-byte clone limit`);
  }
  for (const line of scrub(stderr).split(/[\r\n]+/)) {
    // Progress lines repeat with carriage returns; the last state of each phase is enough.
    if (line.trim() && !/\d+% \(\d+\/\d+\)(?!.*done)/.test(line)) opts.log(line.trim());
  }

  const commit = await new Promise<string>((resolve) => {
    const child = spawn('git', ['-C', checkout, 'rev-parse', 'HEAD'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('close', () => resolve(out.trim()));
    child.once('error', () => resolve(''));
  });
  await fs.rm(path.join(checkout, '.git'), { recursive: true, force: true });
  // What was asked for is what is built, or nothing is: the record says which commit a release runs.
  if (opts.commit && commit !== opts.commit)
    throw new GitError(`fetching ${opts.commit} from ${opts.url} checked out ${commit || 'nothing'} instead`);
  return { commit };
}

/** Where cloneRepository leaves the files of a clone made into `dest`. */
export const cloneCheckout = (dest: string) => path.join(dest, 'src');
