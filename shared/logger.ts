import pino from 'pino';

export function createLogger(name: string, level: string) {
  return pino({ name, level });
}

export type Logger = ReturnType<typeof createLogger>;
