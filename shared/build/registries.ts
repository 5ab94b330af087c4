import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * What a generated Dockerfile's dependency step needs to reach the package registries the way the worker's host does:
 * the CA bundle the host trusts (where registry traffic passes a proxy with its own CA, docs/architecture.md, "Builds
 * and images") and the registry URLs the host's npm and pip are configured with. Only the dependency-install stage sees
 * these.
 */
export interface BuildRegistries {
  /** A PEM bundle on the worker's host, copied into the build context for the install step. */
  caBundle?: string;
  npmRegistry?: string;
  pipIndexUrl?: string;
  pipExtraIndexUrls?: string[];
}

/** Directory of the context holding the build-only files; removed before anything leaves the build stage. */
export const BUILD_ONLY_DIR = '.slipway-build';

const DEFAULT_CA = '/etc/ssl/certs/ca-certificates.crt';

const isFile = (p: string | undefined): p is string => {
  try {
    return !!p && fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

/**
 * A registry URL a tenant's build may see: http(s) and without credentials. Install scripts of the tenant's
 * dependencies run in that step and can read anything given to it, so a registry the host reaches with a token
 * is not handed on (the build then uses the registry's default).
 */
function shareable(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url.trim());
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password) return undefined;
    return u.toString();
  } catch {
    return undefined;
  }
}

/** `key = value` (pip.conf) or `key=value` (.npmrc), the last one in the files that exist. */
function settingIn(files: string[], key: string): string | undefined {
  let found: string | undefined;
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue; // no such file on this host (or not one we may read): it sets nothing
    }
    for (const m of text.matchAll(new RegExp(`^\\s*${key}\\s*=\\s*(.+?)\\s*$`, 'gm'))) found = m[1];
  }
  return found;
}

/** The settings of this host's npm and pip (environment first, then their configuration files). */
export function hostRegistries(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): BuildRegistries {
  const caBundle = [env.SSL_CERT_FILE, env.REQUESTS_CA_BUNDLE, env.PIP_CERT, DEFAULT_CA, env.NODE_EXTRA_CA_CERTS].find(
    isFile,
  );
  const npmRegistry = shareable(
    env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY ?? settingIn([path.join(home, '.npmrc')], 'registry'),
  );
  const pipFiles = [
    '/etc/pip.conf',
    path.join(home, '.pip', 'pip.conf'),
    path.join(home, '.config', 'pip', 'pip.conf'),
  ];
  const pipIndexUrl = shareable(env.PIP_INDEX_URL ?? settingIn(pipFiles, 'index-url'));
  const extra = (env.PIP_EXTRA_INDEX_URL ?? settingIn(pipFiles, 'extra-index-url') ?? '')
    .split(/\s+/)
    .map(shareable)
    .filter((u): u is string => u !== undefined);
  return {
    ...(caBundle ? { caBundle } : {}),
    ...(npmRegistry ? { npmRegistry } : {}),
    ...(pipIndexUrl ? { pipIndexUrl } : {}),
    ...(extra.length > 0 ? { pipExtraIndexUrls: extra } : {}),
  };
}

let cached: BuildRegistries | undefined;
/** hostRegistries() of this process, read once. */
export const processRegistries = () => (cached ??= hostRegistries());
