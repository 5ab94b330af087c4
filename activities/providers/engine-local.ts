import { createHash } from 'node:crypto';
import net from 'node:net';

import { heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Docker from 'dockerode';

import { LABELS } from '../../shared/constants';
import { readContainerLogs as readLogs } from '../../shared/engine/logs';
import { createEngineImages } from './engine-images';
import { BRIDGE_PREFIX } from './host-firewall';

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

export interface EngineLocalDeps {
  docker: Docker;
  /** Host name put in the deployment's url. */
  publicHost: string;
  /** Host address the container port is published on. */
  bindIp: string;
  /** Label value naming this Slipway instance: its reconciler removes only objects carrying it. */
  instance: string;
  /** Pull from registries on loopback/private addresses (tests' local registry); refused when absent or false. */
  allowPrivateRegistries?: boolean;
}

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
 * What an ordinary app needs: change file owners and modes of its own files, drop to another user, bind ports
 * below 1024, signal its children. Everything else (raw sockets, mknod, ptrace, namespaces…) stays dropped.
 */
const CAP_ADD = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'SETGID', 'SETUID', 'NET_BIND_SERVICE', 'KILL'];
/** json-file rotation: a chatty app keeps at most 3 × 10 MB of logs on the host. */
const LOG_CONFIG = { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } };
const containerName = (s: Pick<ContainerSpec, 'deploymentId' | 'revision'>) =>
  `slipway-${s.deploymentId}-r${s.revision}`;

function statusCode(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}

function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 1000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A container that exited before answering, or is crash-looping under its restart policy (between two restarts
 * it may look running, so the restart count is the reliable sign).
 */
async function crashedBeforeReady(
  docker: Docker,
  info: Docker.ContainerInspectInfo,
  port: number,
): Promise<ApplicationFailure | undefined> {
  const exited = !info.State.Running || info.State.Restarting;
  if (!exited && info.RestartCount === 0) return undefined;
  const tail = (await readLogs(docker, info.Id, 20)).map((l) => l.message).join('\n');
  const how = exited
    ? `exited with code ${info.State.ExitCode}`
    : `exited and was restarted ${info.RestartCount} times`;
  return ApplicationFailure.create({
    nonRetryable: true,
    type: 'ContainerExited',
    message: `container ${how} before answering on port ${port}; last log lines:\n${tail}`,
  });
}

/** engine_local: deployments as containers on a Docker Engine, one bridge network per organisation. */
export function createEngineLocal({ docker, publicHost, bindIp, instance, allowPrivateRegistries }: EngineLocalDeps) {
  const images = createEngineImages({ docker, allowPrivateRegistries: allowPrivateRegistries ?? false });
  return {
    /** The deploy's image, local or pulled, and only one the org may use (engine-images.ts). */
    ensureImage: images.ensureImage,

    /**
     * The org's bridge network, by ID, on the bridge interface `bridgeName(orgId)`. The engine refuses a second
     * network on one bridge name, so two deploys racing to create it converge on the one that won. A network from
     * before bridge names (outside the firewall's reach) is removed once empty and replaced.
     */
    async ensureNetwork(orgId: string): Promise<string> {
      const name = networkName(orgId);
      const bridge = bridgeName(orgId);
      const canonical = async () => {
        const found = (await docker.listNetworks({ filters: { name: [name] } })).filter((n) => n.Name === name);
        const isolated = found.filter((n) => n.Options?.[BRIDGE_NAME_OPTION] === bridge);
        for (const legacy of found.filter((n) => !isolated.includes(n)))
          // The engine refuses to remove a network in use: those go when their last container does.
          await docker
            .getNetwork(legacy.Id)
            .remove()
            .catch(() => undefined);
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
    },

    /** Idempotent on the container name, so a retried activity reuses the container it already made. */
    async startContainer(spec: ContainerSpec): Promise<StartedContainer> {
      const name = containerName(spec);
      const network = await this.ensureNetwork(spec.orgId);
      const portKey = `${spec.port}/tcp`;
      let container = docker.getContainer(name);
      try {
        await container.inspect();
      } catch (err) {
        if (statusCode(err) !== 404) throw err;
        // Checked again here, and run by ID: the tag may have moved since ensureImage.
        const imageId = await images.usableImageId(spec.image, spec.orgId);
        container = await docker.createContainer({
          name,
          Image: imageId,
          Env: Object.entries(spec.envVars).map(([k, v]) => `${k}=${v}`),
          ExposedPorts: { [portKey]: {} },
          Labels: {
            [LABELS.managed]: 'true',
            [LABELS.deploymentId]: spec.deploymentId,
            [LABELS.orgId]: spec.orgId,
            [LABELS.revision]: String(spec.revision),
            [LABELS.instance]: instance,
          },
          HostConfig: {
            NetworkMode: network,
            PortBindings: { [portKey]: [{ HostIp: bindIp, HostPort: '' }] },
            Memory: spec.limits.memoryMb * 1024 * 1024,
            NanoCpus: Math.round(spec.limits.cpus * 1e9),
            PidsLimit: spec.limits.pids,
            RestartPolicy: { Name: 'unless-stopped' },
            SecurityOpt: ['no-new-privileges'],
            CapDrop: ['ALL'],
            CapAdd: CAP_ADD,
            LogConfig: LOG_CONFIG,
          },
        });
      }
      const info = await container.inspect();
      if (!info.State.Running) await container.start();
      const running = await container.inspect();
      const crashed = await crashedBeforeReady(docker, running, spec.port);
      if (crashed) throw crashed;
      const hostPort = Number(running.NetworkSettings.Ports[portKey]?.[0]?.HostPort);
      if (!hostPort) throw new Error(`engine published no host port for ${portKey}`);
      return { id: running.Id, name, hostPort, url: `http://${publicHost}:${hostPort}` };
    },

    /**
     * Ready when the app accepts TCP on its port inside the org network. The published host port is no signal:
     * docker-proxy accepts connections there even while nothing listens in the container.
     */
    async waitReady(input: { containerId: string; port: number; timeoutS: number }): Promise<void> {
      const container = docker.getContainer(input.containerId);
      const deadline = Date.now() + input.timeoutS * 1000;
      for (;;) {
        heartbeat();
        const info = await container.inspect();
        const crashed = await crashedBeforeReady(docker, info, input.port);
        if (crashed) throw crashed;
        const ips = Object.values(info.NetworkSettings.Networks)
          .map((n) => n.IPAddress)
          .filter(Boolean);
        for (const ip of ips) if (await tcpAnswers(ip, input.port)) return;
        if (Date.now() > deadline) {
          const tail = (await readLogs(docker, input.containerId, 20)).map((l) => l.message).join('\n');
          throw ApplicationFailure.create({
            nonRetryable: true,
            type: 'ReadyTimeout',
            message: `nothing answered on port ${input.port} within ${input.timeoutS} s; last log lines:\n${tail}`,
          });
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    },

    /** Stops every container of the deployment and keeps them, so a failed deploy stops crash-looping but keeps its logs. */
    async stopDeployment(deploymentId: string): Promise<void> {
      const containers = await docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] },
      });
      for (const c of containers) {
        // Without this the restart policy would bring a stopped container back when the engine restarts.
        await docker
          .getContainer(c.Id)
          .update({ RestartPolicy: { Name: 'no' } })
          .catch(() => undefined);
        await docker
          .getContainer(c.Id)
          .stop({ t: 5 })
          .catch((err: unknown) => {
            if (![304, 404].includes(statusCode(err) ?? 0)) throw err;
          });
      }
    },

    /**
     * Removes every container of the deployment, then the org's network once nothing is attached to it: the
     * engine has room for only a few dozen bridge networks. A deploy racing this recreates the network on retry.
     */
    async removeDeployment(deploymentId: string): Promise<number> {
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
      const images = await docker.listImages({ filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] } });
      for (const image of images) {
        await docker
          .getImage(image.Id)
          .remove({ force: true })
          .catch((err: unknown) => {
            if (statusCode(err) !== 404) throw err;
          });
      }
      const orgId = containers[0]?.Labels[LABELS.orgId];
      if (orgId) {
        const networks = (await docker.listNetworks({ filters: { name: [networkName(orgId)] } })).filter(
          (n) => n.Name === networkName(orgId),
        );
        for (const n of networks) {
          const info = await docker.getNetwork(n.Id).inspect();
          if (Object.keys(info.Containers ?? {}).length === 0)
            await docker
              .getNetwork(n.Id)
              .remove()
              .catch(() => undefined);
        }
      }
      return containers.length;
    },
  };
}

export type EngineLocal = ReturnType<typeof createEngineLocal>;
