import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import { deploymentHealth, deploymentLogs, deploymentMetrics } from '@shared/engine/observe';

import { createEngineImages } from './engine-images';
import { type Addressing, instanceName, selectInstances, toInstance, toStatus } from './engine-instances';
import { createOrgNetworks } from './engine-network';
import { crashedBeforeReady, diagnose, failure, waitInstanceReady } from './engine-readiness';
import {
  type DeploymentProvider,
  type Instance,
  type InstanceFilter,
  type InstanceSpec,
  PROVIDER_FAILURES,
} from './provider';

/**
 * What workflows started before the provider interface send to start their one container (the single-container
 * first deploy, activities/deployment/legacy.ts).
 */
export interface ContainerSpec {
  deploymentId: string;
  orgId: string;
  revision: number;
  image: string;
  port: number;
  envVars: Record<string, string>;
  limits: { memoryMb: number; cpus: number; pids: number };
}

export interface StartedContainer {
  id: string;
  name: string;
  hostPort: number;
  url: string;
}

export { bridgeName } from './engine-network';

export interface EngineLocalDeps {
  docker: Docker;
  /** Host name put in the deployment's url. */
  publicHost: string;
  /** Host address the container port is published on. */
  bindIp: string;
  /** Where an edge router not on the engine's host reaches published ports (EDGE_UPSTREAM_HOST). */
  upstreamHost?: string;
  /** Label value naming this Slipway instance: its reconciler removes only objects carrying it. */
  instance: string;
  /** Pull from registries on loopback/private addresses (tests' local registry); refused when absent or false. */
  allowPrivateRegistries?: boolean;
  /** Tenant bridges route the embedded object store's forward (host-firewall.ts): the S3 forward is on. */
  loopbackForward?: boolean;
}

/**
 * What an ordinary app needs: change file owners and modes of its own files, drop to another user, bind ports
 * below 1024, signal its children. Everything else (raw sockets, mknod, ptrace, namespaces…) stays dropped.
 */
const CAP_ADD = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'SETGID', 'SETUID', 'NET_BIND_SERVICE', 'KILL'];
/** json-file rotation: a chatty app keeps at most 3 × 10 MB of logs on the host. */
const LOG_CONFIG = { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } };
/** Running instances come back after a crash or an engine restart; stopping one switches this off first. */
const RESTART = { Name: 'unless-stopped' };

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

/** Tolerates the engine's "already in that state" (304) and "gone" (404) answers. */
const settled =
  (...codes: number[]) =>
  (err: unknown) => {
    if (!codes.includes(statusCode(err) ?? 0)) throw err;
  };

/** engine_local: deployments as containers on a Docker Engine, one bridge network per organisation. */
export function createEngineLocal(deps: EngineLocalDeps) {
  const { docker, instance } = deps;
  const images = createEngineImages({ docker, allowPrivateRegistries: deps.allowPrivateRegistries ?? false });
  const at: Addressing = {
    publicHost: deps.publicHost,
    bindIp: deps.bindIp,
    ...(deps.upstreamHost ? { upstreamHost: deps.upstreamHost } : {}),
  };

  const networks = createOrgNetworks({ docker, instance, loopbackForward: deps.loopbackForward ?? false });
  const ensureNetwork = networks.ensure;

  async function inspectByName(name: string): Promise<Docker.ContainerInspectInfo | undefined> {
    return docker
      .getContainer(name)
      .inspect()
      .catch((err: unknown) => {
        if (statusCode(err) === 404) return undefined;
        throw err;
      });
  }

  async function create(spec: InstanceSpec, name: string, network: string): Promise<void> {
    // Checked again here, and run by ID: the tag may have moved since prepareImage.
    const imageId = spec.imageId
      ? await images.usableReleaseImage(spec.image, spec.imageId, spec.orgId)
      : await images.usableImageId(spec.image, spec.orgId);
    const portKey = `${spec.port}/tcp`;
    await docker.createContainer({
      name,
      Image: imageId,
      Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
      ExposedPorts: { [portKey]: {} },
      Labels: {
        [LABELS.managed]: 'true',
        [LABELS.deploymentId]: spec.deploymentId,
        [LABELS.orgId]: spec.orgId,
        [LABELS.revision]: String(spec.revision),
        [LABELS.replica]: String(spec.replica),
        [LABELS.instance]: instance,
      },
      HostConfig: {
        NetworkMode: network,
        PortBindings: { [portKey]: [{ HostIp: deps.bindIp, HostPort: '' }] },
        Memory: spec.limits.memoryMb * 1024 * 1024,
        NanoCpus: Math.round(spec.limits.cpus * 1e9),
        PidsLimit: spec.limits.pids,
        ...(spec.mounts?.length ? { Mounts: spec.mounts } : {}),
        RestartPolicy: RESTART,
        SecurityOpt: ['no-new-privileges'],
        CapDrop: ['ALL'],
        CapAdd: CAP_ADD,
        LogConfig: LOG_CONFIG,
      },
    });
  }

  /** Starts a stopped container again with its restart policy back on (stopInstances switched it off). */
  async function restart(info: Docker.ContainerInspectInfo): Promise<void> {
    const container = docker.getContainer(info.Id);
    if (info.HostConfig.RestartPolicy?.Name !== RESTART.Name) await container.update({ RestartPolicy: RESTART });
    await container.start().catch(settled(304));
  }

  /** The engine refuses to start a container whose network no longer exists. */
  const networkGone = (err: unknown) =>
    (err as { statusCode?: number }).statusCode === 404 && /network .* not found/i.test(String((err as Error).message));

  async function startInstance(spec: InstanceSpec): Promise<Instance> {
    for (const [what, n] of [
      ['revision', spec.revision],
      ['replica', spec.replica],
    ] as const)
      if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`${what} must be a non-negative integer`);
    const name = instanceName(spec.deploymentId, spec.revision, spec.replica);
    // Independent engine calls side by side: every round trip here is on the deploy's path to its first answer.
    const [network, existing] = await Promise.all([ensureNetwork(spec.orgId), inspectByName(name)]);
    // A container made just now is stopped with its restart policy on: it is started without reading it back.
    // 409: an earlier attempt of this activity made it; the state that attempt left is read.
    const made =
      !existing &&
      (await create(spec, name, network).then(
        () => true,
        (err: unknown) => {
          settled(409)(err);
          return false;
        },
      ));
    const info = made ? undefined : (existing ?? (await docker.getContainer(name).inspect()));
    if (!info?.State.Running) {
      const start = info ? () => restart(info) : () => docker.getContainer(name).start().catch(settled(304));
      await start().catch(async (err: unknown) => {
        if (!networkGone(err)) throw err;
        // Its org network was removed meanwhile (a destroy that found it unused): make the container again on the
        // network ensured above; nothing of it is lost but an instance that never served.
        await docker.getContainer(name).remove({ force: true }).catch(settled(404));
        await create(spec, name, network).catch(settled(409));
        await docker.getContainer(name).start().catch(settled(304));
      });
    }
    const running = await docker.getContainer(name).inspect();
    const crashed = await crashedBeforeReady(docker, running, { id: running.Id, name }, spec.port);
    if (crashed) throw crashed;
    return toInstance({ info: running, revision: spec.revision, replica: spec.replica }, at);
  }

  async function stopInstances(deploymentId: string, filter: InstanceFilter = {}): Promise<number> {
    const selected = await selectInstances(docker, deploymentId, filter);
    // All at once: each may take its whole grace period (an app that ignores SIGTERM).
    await Promise.all(
      selected.map(async ({ info }) => {
        const container = docker.getContainer(info.Id);
        // Without this the restart policy would bring a stopped container back when the engine restarts.
        await container.update({ RestartPolicy: { Name: 'no' } }).catch(settled(404));
        await container.stop({ t: 5 }).catch(settled(304, 404));
      }),
    );
    return selected.length;
  }

  async function startInstances(deploymentId: string, filter: InstanceFilter = {}): Promise<Instance[]> {
    for (const { info } of await selectInstances(docker, deploymentId, filter))
      if (!info.State.Running) await restart(info);
    const started = await selectInstances(docker, deploymentId, filter);
    const down = started.find((s) => !s.info.State.Running);
    if (down) {
      const d = await diagnose(docker, { id: down.info.Id, name: down.info.Name.replace(/^\//, '') });
      throw failure(PROVIDER_FAILURES.containerExited, `container ${d.name} exited at once with code ${d.exitCode}`, d);
    }
    return started.map((s) => toInstance(s, at));
  }

  async function removeInstances(deploymentId: string, filter: InstanceFilter): Promise<number> {
    let removed = 0;
    for (const { info } of await selectInstances(docker, deploymentId, filter)) {
      try {
        await docker.getContainer(info.Id).remove({ force: true, v: true });
        removed++;
      } catch (err) {
        // Gone, or being removed by a concurrent attempt.
        settled(404, 409)(err);
      }
    }
    return removed;
  }

  /**
   * Removes every container of the deployment, then the org's network once nothing is attached to it: the
   * engine has room for only a few dozen bridge networks. A deploy racing this recreates the network on retry.
   */
  async function destroy(deploymentId: string): Promise<number> {
    const containers = await docker.listContainers({
      all: true,
      filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] },
    });
    for (const c of containers) {
      try {
        await docker.getContainer(c.Id).remove({ force: true, v: true });
      } catch (err) {
        if (statusCode(err) !== 404) throw err;
      }
    }
    // A source deployment's built images go with it (slipway/<deploymentId>:<revision>).
    const built = await docker.listImages({ filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] } });
    for (const image of built) {
      await docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch((err: unknown) => {
          if (statusCode(err) !== 404) throw err;
        });
    }
    const orgId = containers[0]?.Labels[LABELS.orgId];
    if (orgId) await networks.removeIfUnused(orgId);
    return containers.length;
  }

  const provider: DeploymentProvider = {
    provider: 'engine_local',
    async prepareImage(image, orgId) {
      const { pulled } = await images.ensureImage(image, orgId);
      return { pulled, imageId: await images.usableImageId(image, orgId) };
    },
    startInstance,
    waitInstanceReady: (ref, opts) => waitInstanceReady(docker, ref, opts),
    listInstances: async (deploymentId, filter) =>
      (await selectInstances(docker, deploymentId, filter)).map((s) => toStatus(s, at)),
    stopInstances,
    startInstances,
    removeInstances,
    destroy,
    health: (deploymentId, opts) => deploymentHealth(docker, deploymentId, opts),
    metrics: (deploymentId, filter) => deploymentMetrics(docker, deploymentId, filter),
    logs: (deploymentId, query) => deploymentLogs(docker, deploymentId, query),
    pruneImages: (deploymentId, keep) => images.pruneImages(deploymentId, keep),
    diagnose: (ref) => diagnose(docker, ref),
  };

  return {
    ...provider,
    ensureNetwork,

    // What workflows started before the provider interface call, as thin wrappers (activities/deployment/legacy.ts
    // says which recorded histories still need each).
    /** The deploy's image, local or pulled, and only one the org may use (engine-images.ts). */
    ensureImage: images.ensureImage,
    /** Replica 0 of the revision, under the name such workflows gave it. */
    async startContainer(spec: ContainerSpec): Promise<StartedContainer> {
      const { envVars, ...rest } = spec;
      const started = await startInstance({ ...rest, env: envVars, replica: 0 });
      return { id: started.id, name: started.name, hostPort: started.hostPort, url: started.url };
    },
    /** TCP only, as before: such deployments may serve something other than HTTP. */
    waitReady(input: { containerId: string; port: number; timeoutS: number }): Promise<void> {
      const ref = { id: input.containerId, name: input.containerId };
      return waitInstanceReady(docker, ref, { port: input.port, timeoutS: input.timeoutS, http: false });
    },
    /** Stops every container of the deployment and keeps them, so a failed deploy stops crash-looping but keeps its logs. */
    async stopDeployment(deploymentId: string): Promise<void> {
      await stopInstances(deploymentId);
    },
  };
}

export type EngineLocal = ReturnType<typeof createEngineLocal>;
