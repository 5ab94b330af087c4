import pino from 'pino';

/**
 * Fields that may hold a credential or an env value, censored wherever they appear in a log object: a careless
 * `log.info({input})` must not put a token, a secret or an environment value in the log.
 */
const REDACT = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'token',
  '*.token',
  'apiKey',
  '*.apiKey',
  'secret',
  '*.secret',
  'envVars',
  '*.envVars',
  // PATCH …/env's new values.
  'set',
  '*.set',
  // An MCP deploy_files project: code, and often config with keys in it.
  'files',
  '*.files',
  'gitToken',
  '*.gitToken',
  // A Git binding's webhook secret, and GitLab's header that carries it as it is.
  'webhookSecret',
  '*.webhookSecret',
  'headers["x-gitlab-token"]',
  '*.headers["x-gitlab-token"]',
];

/** `destination` lets a test read the log lines (the access log, what an error wrote); default is stdout. */
export function createLogger(name: string, level: string, destination?: pino.DestinationStream) {
  return pino({ name, level, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}

export type Logger = ReturnType<typeof createLogger>;
