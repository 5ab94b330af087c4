import { Writable } from 'node:stream';

import { createLogger } from '@shared/logger';

/** The log lines `fn` writes, parsed. */
function linesOf(fn: (log: ReturnType<typeof createLogger>) => void): Record<string, unknown>[] {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out.push(chunk.toString('utf8'));
      done();
    },
  });
  fn(createLogger('test', 'info', sink));
  return out
    .join('')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the log never holds a credential or an env value', () => {
  it('censors env values however they arrive: envVars, an env PATCH, an inline project', () => {
    const [line] = linesOf((log) =>
      log.info(
        {
          body: {
            envVars: { API_KEY: 'v1' },
            set: { B: 'v2' },
            unset: ['A'],
            files: [{ path: '.env', content: 'K=v3' }],
          },
          headers: { authorization: 'Bearer t' },
        },
        'request',
      ),
    );
    const text = JSON.stringify(line);
    for (const secret of ['v1', 'v2', 'v3', 'Bearer t']) expect(text).not.toContain(secret);
    // Names of what is removed are not values, and stay readable.
    expect(text).toContain('"unset":["A"]');
  });
});

describe('a Git binding’s webhook secret', () => {
  it('is censored as an answer’s field and as GitLab’s header', () => {
    const [line] = linesOf((log) =>
      log.info(
        {
          answer: { webhookSecret: 'w1' },
          req: { headers: { 'x-gitlab-token': 'w2', 'x-gitlab-event': 'Push Hook' } },
        },
        'delivery',
      ),
    );
    const text = JSON.stringify(line);
    for (const secret of ['w1', 'w2']) expect(text).not.toContain(secret);
    expect(text).toContain('Push Hook');
  });
});
