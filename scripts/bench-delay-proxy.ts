import net from 'node:net';

/**
 * A TCP proxy that holds every chunk `PROXY_DELAY_MS` in each direction on its way to and from
 * `PROXY_TARGET` (host:port): a Temporal server far away, or slow to answer. It listens on
 * 127.0.0.1:`PORT`, in a process of its own so that its timers do not slow the load generator.
 */
const [host, port] = (process.env.PROXY_TARGET ?? '127.0.0.1:7233').split(':');
const delayMs = Number(process.env.PROXY_DELAY_MS ?? 200);

const later = (to: net.Socket) => (chunk: Buffer) => {
  setTimeout(() => {
    if (!to.destroyed) to.write(chunk);
  }, delayMs);
};

net
  .createServer((client) => {
    const upstream = net.connect(Number(port), host);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      socket.on('error', () => undefined);
      socket.on('data', later(other));
      // The other side goes too, once what it still holds has gone out.
      socket.on('close', () => setTimeout(() => other.end(), delayMs));
    }
  })
  .listen(Number(process.env.PORT ?? 8114), '127.0.0.1');
