import type Docker from 'dockerode';

import { LABELS } from '../constants';

/**
 * Where RUN steps run: a bridge of its own whose interface name starts with `slw-`, so the host firewall's rules for
 * every `slw+` interface (no host ports, no private or metadata ranges; docs/architecture.md, "Builds and images")
 * apply to builds, and without inter-container traffic, so two builds never reach each other.
 */
export const BUILD_NETWORK = { name: 'slipway-build', bridge: 'slw-build' } as const;
const PURPOSE_LABEL = 'dev.slipway.purpose';

/** The engine refused or lacks what a sandboxed build needs; not the tenant's fault, so retried. */
export class BuildSandboxError extends Error {
  override name = 'BuildSandboxError';
}

/**
 * Makes sure the build network exists with our bridge name; safe to call before every build and from several
 * workers at once (the engine refuses the second create, and we then read the first one's network).
 */
export async function ensureBuildNetwork(docker: Docker): Promise<string> {
  const inspect = async () => {
    try {
      return (await docker.getNetwork(BUILD_NETWORK.name).inspect()) as {
        Options?: Record<string, string>;
        Labels?: Record<string, string>;
      };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  };
  let network = await inspect();
  if (!network) {
    try {
      await docker.createNetwork({
        Name: BUILD_NETWORK.name,
        Driver: 'bridge',
        CheckDuplicate: true,
        Labels: { [LABELS.managed]: 'true', [PURPOSE_LABEL]: 'build-network' },
        Options: {
          'com.docker.network.bridge.name': BUILD_NETWORK.bridge,
          'com.docker.network.bridge.enable_icc': 'false',
        },
      });
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 409) throw err;
    }
    network = await inspect();
  }
  // A network of that name made by someone else would run builds outside the firewall's interface match.
  if (network?.Options?.['com.docker.network.bridge.name'] !== BUILD_NETWORK.bridge) {
    throw new BuildSandboxError(
      `the engine's network ${BUILD_NETWORK.name} is not Slipway's build network (bridge ${BUILD_NETWORK.bridge}); remove it so Slipway can create its own`,
    );
  }
  return BUILD_NETWORK.name;
}

export interface BuildLimits {
  memoryMb: number;
  cpus: number;
  pids: number;
}

/**
 * The classic builder's resource options (Docker 20.10 /build): memory without extra swap, a CPU quota, and a
 * small /dev/shm. The API has no pids option for build containers (only the run API's PidsLimit): the process
 * limit comes from the build's own cgroup parent instead (build-cgroup.ts).
 */
export function buildResourceOptions(limits: BuildLimits) {
  const bytes = limits.memoryMb * 1024 * 1024;
  const period = 100_000;
  return {
    memory: bytes,
    memswap: bytes,
    cpuperiod: period,
    cpuquota: Math.max(1000, Math.round(limits.cpus * period)),
    shmsize: 64 * 1024 * 1024,
  };
}

/** The engine's verdict on a step the kernel killed for memory (137 = SIGKILL, what the OOM killer sends). */
export const outOfMemory = (engineMessage: string) => /returned a non-zero code: 137\b/.test(engineMessage);

/**
 * Bounds concurrent builds in this worker process: `total` at once, `perOrg` for one organisation, first come
 * first served. Per process only: several workers each allow as many (documented in README).
 */
export function createBuildSlots(total: number, perOrg: number) {
  let running = 0;
  const byOrg = new Map<string, number>();
  const waiting: { orgId: string; go: () => void }[] = [];

  const fits = (orgId: string) => running < total && (byOrg.get(orgId) ?? 0) < perOrg;
  const take = (orgId: string) => {
    running++;
    byOrg.set(orgId, (byOrg.get(orgId) ?? 0) + 1);
  };
  const wake = () => {
    for (let i = 0; i < waiting.length; i++) {
      const w = waiting[i]!;
      if (!fits(w.orgId)) continue;
      waiting.splice(i--, 1);
      take(w.orgId);
      w.go();
    }
  };

  return {
    /** Resolves with a release function once a slot is free; a signal that aborts first leaves the queue. */
    async acquire(orgId: string, signal: AbortSignal, onWait?: (why: string) => void): Promise<() => void> {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        running--;
        const n = (byOrg.get(orgId) ?? 1) - 1;
        if (n === 0) byOrg.delete(orgId);
        else byOrg.set(orgId, n);
        wake();
      };
      if (fits(orgId)) {
        take(orgId);
        return release;
      }
      onWait?.(
        (byOrg.get(orgId) ?? 0) >= perOrg
          ? `waiting for this organisation's other build to finish (${perOrg} at a time)`
          : `waiting for a build slot (${total} builds at a time on this worker)`,
      );
      await new Promise<void>((resolve, reject) => {
        const entry = { orgId, go: resolve };
        waiting.push(entry);
        signal.addEventListener(
          'abort',
          () => {
            const at = waiting.indexOf(entry);
            if (at < 0) return; // already given a slot: the caller releases it
            waiting.splice(at, 1);
            reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
          },
          { once: true },
        );
      });
      if (signal.aborted) {
        release();
        throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
      }
      return release;
    },
    /** For tests and logs: builds running now, in total and per organisation. */
    stats: () => ({ running, waiting: waiting.length, byOrg: Object.fromEntries(byOrg) }),
  };
}

export type BuildSlots = ReturnType<typeof createBuildSlots>;
