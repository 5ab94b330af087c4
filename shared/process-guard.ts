import type { Logger } from './logger';

/**
 * The last line of defence, after every handler: an error that escaped them (an event emitter of some library
 * with no 'error' listener, a promise nobody awaited) is logged with its stack, and the process keeps serving its
 * other requests or tasks. One bad input must never take down the api or a worker, and with it every other
 * tenant's work in flight; the bug that let it escape is still a bug, and the log line is how it is found.
 */
export function logUnexpectedErrors(log: Pick<Logger, 'error'>, processName: string): void {
  process.on('uncaughtException', (err, origin) => {
    log.error({ err, origin }, `${processName}: an error escaped every handler; logged, and the process keeps running`);
  });
  process.on('unhandledRejection', (reason) => {
    log.error(
      { err: reason },
      `${processName}: a promise rejection nobody handled; logged, and the process keeps running`,
    );
  });
}
