import fs from 'node:fs/promises';

import { isAbsent } from '../ignore';

/** A TCP socket in LISTEN state inside a container's network namespace. */
export interface Listener {
  port: number;
  /** Only the loopback address: unreachable from outside the container. */
  loopbackOnly: boolean;
}

const LISTEN = '0A';

/** Parses /proc/net/tcp{,6}: `sl local_address rem_address st …`, addresses as hex `ADDR:PORT`. */
export function parseProcNetTcp(text: string): { address: string; port: number }[] {
  const out: { address: string; port: number }[] = [];
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 4 || cols[3] !== LISTEN) continue;
    const [addr, port] = cols[1]!.split(':');
    if (!addr || !port) continue;
    out.push({ address: addr.toUpperCase(), port: parseInt(port, 16) });
  }
  return out;
}

/**
 * 127.0.0.0/8 (the kernel prints IPv4 little-endian, so the first octet is last), ::1, and ::ffff:127.x.x.x.
 * Docker's embedded DNS listens on 127.0.0.11 inside every container of a user-defined network: loopback too.
 */
const isLoopback = (address: string) =>
  (address.length === 8 && address.endsWith('7F')) ||
  address === '00000000000000000000000001000000' ||
  (address.length === 32 && address.startsWith('0000000000000000FFFF0000') && address.endsWith('7F'));

/**
 * The ports a container's processes listen on, read from the host through the main process's network namespace
 * (/proc/<pid>/net/tcp), so nothing runs inside the container. Empty when the engine's processes are not visible
 * here (a worker in its own container): the caller then gives a hint without it.
 */
export async function listeningPorts(pid: number | undefined): Promise<Listener[]> {
  if (!pid) return [];
  const read = (file: string) =>
    fs.readFile(`/proc/${pid}/net/${file}`, 'utf8').catch((err: NodeJS.ErrnoException) => {
      // Not visible from here: another PID namespace (ENOENT), or /proc mounted with hidepid (EACCES).
      if (isAbsent(err) || err.code === 'EACCES') return '';
      throw err;
    });
  const found = [...parseProcNetTcp(await read('tcp')), ...parseProcNetTcp(await read('tcp6'))];
  const byPort = new Map<number, boolean>();
  for (const { address, port } of found) {
    const loopback = isLoopback(address);
    byPort.set(port, (byPort.get(port) ?? true) && loopback);
  }
  return [...byPort].map(([port, loopbackOnly]) => ({ port, loopbackOnly })).sort((a, b) => a.port - b.port);
}
