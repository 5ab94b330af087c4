import net from 'node:net';

import { StackError } from './stack-error';

/** A port a part of the local stack listens on, and the variable that moves it. */
export interface PortClaim {
  port: number;
  /** What listens there, as the user knows it: "Redis", "the Temporal Web UI". */
  part: string;
  variable: string;
}

/**
 * The port the variable asks for, else the documented default. A bad value stops start-up with one line
 * naming the variable, like every other setting.
 */
export function configuredPort(variable: string, fallback: number): number {
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new StackError(`invalid ${variable}=${JSON.stringify(raw)}: a port number from 1 to 65535`);
  }
  return port;
}

/**
 * Refuses a port another program holds by trying to bind it ourselves and letting it go. Asking whatever
 * answers there instead would talk to a stranger's server, and a readiness probe would then take that server
 * for ours; a bind touches nobody.
 */
export function ensurePortFree(claim: PortClaim, host = '127.0.0.1'): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      const taken = err.code === 'EADDRINUSE';
      reject(
        new StackError(
          `port ${claim.port} (${claim.part}) is ${taken ? 'taken by another program' : `not available (${err.code})`}; ` +
            `set ${claim.variable} to a free port${taken ? ' or stop that program' : ''}`,
        ),
      );
    });
    server.listen({ port: claim.port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** Checks every claim; the first port taken is the one line reported. */
export async function ensurePortsFree(claims: PortClaim[], host?: string): Promise<void> {
  for (const claim of claims) await ensurePortFree(claim, host);
}
