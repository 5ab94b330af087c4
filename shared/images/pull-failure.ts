/**
 * A pull that failed because no registry answered (its name did not resolve, it refused or it timed out) is not an
 * image that was not found: checking the name and tag would not help. Only the engine's words tell the two apart;
 * they stay in the worker's log, and the caller reads which of these it was.
 */
const UNREACHABLE: [RegExp, string][] = [
  [/no such host|server misbehaving|name resolution|Name or service not known/i, 'its host name does not resolve'],
  [/connection refused/i, 'it refused the connection'],
  [/network is unreachable|no route to host/i, 'no network route leads to it'],
  [
    /i\/o timeout|Client\.Timeout exceeded|context deadline exceeded|TLS handshake timeout|request canceled while waiting for connection|timed out/i,
    'it did not answer in time',
  ],
  [/connection reset by peer/i, 'it closed the connection'],
];

/** Why the registry could not be reached, from the engine's error text; undefined when a registry answered. */
export function unreachableReason(engineText: string): string | undefined {
  return UNREACHABLE.find(([pattern]) => pattern.test(engineText))?.[1];
}

/** The failed deploy's message for `reference`, whose registry `registry` (docker.io for Docker Hub) never answered. */
export const registryUnreachableMessage = (reference: string, registry: string, reason: string) =>
  `image ${reference} is not on the engine and could not be pulled: the registry ${registry} could not be reached ` +
  `(${reason}). Check the registry's address, or deploy from source or an image already on the engine; deploy again once the registry is reachable.`;

const MESSAGE = /^image \S+ is not on the engine and could not be pulled: the registry (\S+) could not be reached/;

/** The registry a failure's message (registryUnreachableMessage) says could not be reached, if it says so. */
export const unreachableRegistryIn = (message: string): string | undefined => MESSAGE.exec(message)?.[1];
