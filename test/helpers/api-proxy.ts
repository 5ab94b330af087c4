import net from 'node:net';

/**
 * A TCP proxy to the api that misbehaves on event streams only, as a flaky network or a restarting proxy would:
 * `cutEventsAfter` cuts each stream's answer after that many bytes; `delayEventsMs` holds each stream's request that
 * long before passing it on (a slow connection, a busy server). Other requests pass untouched.
 */
export async function apiProxy(target: URL, opts: { cutEventsAfter?: number; delayEventsMs?: number }) {
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((down) => {
    const up = net.connect(Number(target.port), target.hostname);
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    let events = false;
    let sent = 0;
    // What goes up keeps its order: a held request holds whatever follows it on the connection.
    let upward = Promise.resolve();
    down.on('data', (chunk: Buffer) => {
      // A kept-alive connection carries one request after another: the event stream is the last it carries.
      const opensStream = /^GET \/platform\/deployments\/[^/ ]+\/events[ ?]/.test(chunk.toString('latin1'));
      if (opensStream) {
        events = true;
        sent = 0;
      }
      const delay = opensStream ? (opts.delayEventsMs ?? 0) : 0;
      upward = upward
        .then(() => (delay > 0 ? new Promise<void>((resolve) => setTimeout(resolve, delay)) : undefined))
        .then(() => {
          if (!up.destroyed) up.write(chunk);
        });
    });
    up.on('data', (chunk: Buffer) => {
      const limit = opts.cutEventsAfter;
      if (events && limit !== undefined && sent + chunk.length > limit) {
        cuts++;
        down.end(chunk.subarray(0, limit - sent), () => down.destroy());
        up.destroy();
        return;
      }
      sent += chunk.length;
      down.write(chunk);
    });
    up.on('end', () => down.end());
    down.on('end', () => void upward.then(() => up.end()));
    up.on('error', () => down.destroy());
    down.on('error', () => up.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cuts: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
