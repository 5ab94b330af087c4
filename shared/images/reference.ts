/**
 * Image references, by the distribution reference grammar (github.com/distribution/reference, regexp.go) and
 * normalised as docker does (`busybox` is `docker.io/library/busybox:latest`). Every reference is parsed here
 * before anything sends it to the engine: dockerode puts names into URL paths unescaped, and the engine
 * resolves what it does not recognise as a reference as an image ID prefix.
 */

export interface ImageReference {
  /** Registry `host[:port]`; `docker.io` when the reference names none. */
  registryHost: string;
  /** Repository path in that registry; `library/<name>` for one-component names on docker.io. */
  path: string;
  /** `latest` when the reference has neither tag nor digest; absent when it has only a digest. */
  tag?: string;
  /** `algorithm:hex`; when present the engine resolves by it and ignores the tag. */
  digest?: string;
}

/** A reference that is not one, with a message a caller can show as is. */
export class ImageReferenceError extends Error {
  override name = 'ImageReferenceError';
}

export const DEFAULT_REGISTRY = 'docker.io';
const LEGACY_DEFAULT_REGISTRY = 'index.docker.io';
const NAME_MAX = 255;

const alphaNumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alphaNumeric}(?:${separator}${alphaNumeric})*`;
const path = `${pathComponent}(?:/${pathComponent})*`;
const PATH = new RegExp(`^${path}$`);
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domain = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const DOMAIN = new RegExp(`^${domain}$`);
const tag = '[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}';
const TAG = new RegExp(`^${tag}$`);
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const DIGEST = new RegExp(`^${digest}$`);
const HEX = /^[0-9a-f]+$/;
const ID_ALGORITHMS = new Set(['sha256', 'sha384', 'sha512']);

const EXAMPLES = 'e.g. nginx:1.27, registry.example.com/team/app:2 or app@sha256:<64 hex digits>';
const ID_REFUSED =
  'image IDs and ID prefixes are not accepted: name the image by repository and tag, or repository@digest';

/** docker's splitDockerDomain: the first component is a registry only if it looks like a host. */
function splitRegistry(name: string): { registryHost: string; path: string; explicit: boolean } {
  const slash = name.indexOf('/');
  const first = slash === -1 ? '' : name.slice(0, slash);
  if (slash === -1 || !(/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first)) {
    return { registryHost: DEFAULT_REGISTRY, path: slash === -1 ? `library/${name}` : name, explicit: false };
  }
  const host = first === LEGACY_DEFAULT_REGISTRY ? DEFAULT_REGISTRY : first;
  const rest = name.slice(slash + 1);
  return {
    registryHost: host,
    path: host === DEFAULT_REGISTRY && !rest.includes('/') ? `library/${rest}` : rest,
    explicit: true,
  };
}

/** Parses and normalises `text`; throws ImageReferenceError saying what is wrong. */
export function parseImageReference(text: string): ImageReference {
  const bad = (why: string) => new ImageReferenceError(`"${text.slice(0, 80)}" is not a valid image reference: ${why}`);
  if (text.length === 0) throw bad(`it is empty (${EXAMPLES})`);
  if (text.length > NAME_MAX + 1 + 128 + 1 + 7 + 128) throw bad('it is too long');
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad('the part after "@" must be a digest such as sha256:<64 hex digits>');
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad('a tag is 1 to 128 letters, digits, "_", "." or "-", not starting with "." or "-"');
  }
  const name = rest;
  if (name.length === 0) throw bad(`it has no repository name (${EXAMPLES})`);
  if (name.length > NAME_MAX) throw bad(`the repository name is longer than ${NAME_MAX} characters`);
  const { registryHost, path, explicit } = splitRegistry(name);
  if (explicit && !DOMAIN.test(registryHost))
    throw bad(`"${registryHost}" is not a registry host[:port] (${EXAMPLES})`);
  if (!PATH.test(path)) {
    throw bad(
      'a repository name is lowercase letters and digits in "/"-separated parts, joined by ".", "_", "__" or "-" ' +
        `(${EXAMPLES})`,
    );
  }
  // What docker would look up as an image ID: a bare hex name (an ID prefix) or "sha256:<hex>".
  if (!explicit && !name.includes('/')) {
    if (HEX.test(name) && tag === undefined && digest === undefined) throw bad(ID_REFUSED);
    if (ID_ALGORITHMS.has(name) && tag !== undefined && HEX.test(tag)) throw bad(ID_REFUSED);
  }
  if (/^[0-9a-f]{64}$/.test(name)) throw bad(ID_REFUSED);
  return {
    registryHost,
    path,
    ...(tag !== undefined || digest === undefined ? { tag: tag ?? 'latest' } : {}),
    ...(digest ? { digest } : {}),
  };
}

/**
 * What parseImageReference accepts, as one pattern for the OpenAPI document (test/unit/request-patterns.test.ts holds
 * the two together): not an image ID (a bare hex name, `sha256:<hex>`, 64 hex digits before a tag or digest); a first
 * component that looks like a host (a `.`, a `:`, an uppercase letter, or `localhost`) is the registry; then the
 * repository, an optional tag and an optional digest. All but the name's 255 characters, which the description
 * states: as a lookahead it made generating a matching value take seconds each.
 */
const looksLikeHost = '(?:[^/]*[.:A-Z][^/]*|localhost)/';
export const IMAGE_REFERENCE = new RegExp(
  '^(?![0-9a-f]+$)(?!sha(?:256|384|512):[0-9a-f]+(?:@|$))(?![0-9a-f]{64}(?:[:@][^/]*)?$)' +
    `(?:(?=${looksLikeHost})${domain}/${path}|(?!${looksLikeHost})${path})(?::${tag})?(?:@${digest})?$`,
);

/** `registryHost/path`, the repository the engine records tags and digests under. */
export const repositoryOf = (ref: ImageReference) => `${ref.registryHost}/${ref.path}`;

/** The fully spelled-out reference: what we send to the engine, so it can never match an ID prefix. */
export function formatImageReference(ref: ImageReference): string {
  return `${repositoryOf(ref)}${ref.tag !== undefined ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** The parsed reference, or undefined when `text` is not one (for the engine's own RepoTags/RepoDigests). */
export function tryParseImageReference(text: string): ImageReference | undefined {
  try {
    return parseImageReference(text);
  } catch {
    return undefined;
  }
}

/** Why `text` is not an image reference (a message for the caller), or undefined when it is one. */
export function imageReferenceProblem(text: string): string | undefined {
  try {
    parseImageReference(text);
    return undefined;
  } catch (err) {
    if (err instanceof ImageReferenceError) return err.message;
    throw err;
  }
}
