import { createHash } from 'node:crypto';

import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';

import { allowLoopbackForward, BRIDGE_PREFIX } from './host-firewall';

const networkName = (orgId: string) => `slipway-org-${orgId}`;
/**
 * The org network's bridge interface: a known prefix, so host-firewall.ts's `slw+` rules cover every tenant bridge
 * (Linux allows 15 characters: the prefix and 11 hex characters of the org's hash).
 */
export const bridgeName = (orgId: string) =>
  `${BRIDGE_PREFIX}${createHash('sha256')
    .update(orgId)
    .digest('hex')
    .slice(0, 15 - BRIDGE_PREFIX.length)}`;
const BRIDGE_NAME_OPTION = 'com.docker.network.bridge.name';

/**
 * A network removal the engine refused because a container still uses it (403, 409), or one already gone (404): it
 * stays for its containers, or there is nothing to remove. Anything else is thrown.
 */
function inUseOrGone(err: unknown): void {
  const code = (err as { statusCode?: number }).statusCode;
  if (code !== 403 && code !== 404 && code !== 409) throw err;
}

/**
 * One bridge network per organisation, so tenants cannot reach each other (docs/architecture.md, "Providers and the
 * engine").
 */
export function createOrgNetworks({
  docker,
  instance,
  loopbackForward = false,
}: {
  docker: Docker;
  instance: string;
  /**
   * The S3 forward is on (host-firewall.ts): every tenant bridge routes it, so any app holding a bucket's key (a link's,
   * or one made by hand) reaches the store, from the network's first container on. The bridge exists once the
   * network does.
   */
  loopbackForward?: boolean;
}) {
  return {
    /**
     * The org's bridge network, by ID, on the bridge interface `bridgeName(orgId)`. The engine refuses a second
     * network on one bridge name, so two deploys racing to create it converge on the one that won. A network from
     * before bridge names (outside the firewall's reach) is removed once empty and replaced.
     */
    async ensure(orgId: string): Promise<string> {
      const id = await ensureNetwork(orgId);
      if (loopbackForward) await allowLoopbackForward(bridgeName(orgId));
      return id;
    },

    /** Removes the org's network once nothing is attached: the engine has room for only a few dozen bridges. */
    removeIfUnused,
  };

  async function ensureNetwork(orgId: string): Promise<string> {
    const name = networkName(orgId);
    const bridge = bridgeName(orgId);
    const canonical = async () => {
      const found = (await docker.listNetworks({ filters: { name: [name] } })).filter((n) => n.Name === name);
      const isolated = found.filter((n) => n.Options?.[BRIDGE_NAME_OPTION] === bridge);
      for (const legacy of found.filter((n) => !isolated.includes(n)))
        // The engine refuses to remove a network in use: those go when their last container does.
        await docker.getNetwork(legacy.Id).remove().catch(inUseOrGone);
      return isolated[0]?.Id;
    };
    const existing = await canonical();
    if (existing) return existing;
    try {
      await docker.createNetwork({
        Name: name,
        Driver: 'bridge',
        Options: { [BRIDGE_NAME_OPTION]: bridge },
        Labels: { [LABELS.managed]: 'true', [LABELS.orgId]: orgId, [LABELS.instance]: instance },
      });
    } catch (err) {
      const won = await canonical();
      if (won) return won;
      throw err;
    }
    const id = await canonical();
    if (!id) throw new Error(`network ${name} vanished right after it was created`);
    return id;
  }

  async function removeIfUnused(orgId: string): Promise<void> {
    const networks = (await docker.listNetworks({ filters: { name: [networkName(orgId)] } })).filter(
      (n) => n.Name === networkName(orgId),
    );
    for (const n of networks) {
      // Stopped and just-created containers are not endpoints of the network (its Containers lists running ones
      // only) but still need it to start: any container of the network keeps it.
      const members = await docker.listContainers({ all: true, filters: { network: [n.Name] } });
      // A deploy of the org may attach a container between the listing and the removal: it keeps the network.
      if (members.length === 0) await docker.getNetwork(n.Id).remove().catch(inUseOrGone);
    }
  }
}
