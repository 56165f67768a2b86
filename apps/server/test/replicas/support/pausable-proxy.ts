import { connect, createServer, type Socket } from 'node:net';

/** A loopback TCP proxy that can freeze traffic without closing connections, like a stalled Redis. */
export interface PausableProxy {
  readonly port: number;
  /**
   * Stops forwarding in both directions. Connections stay open and what is
   * sent meanwhile waits in the socket buffers, as with a Redis that hangs
   * (a long-running script, a stopped process, a saturated network).
   */
  pause(): void;
  /** Forwards again, delivering everything that waited, in order. */
  resume(): void;
  close(): Promise<void>;
}

/**
 * Starts a proxy in front of `target`. The stopped-Redis case (connections
 * refused) is covered by the runtime's `tcp-proxy.ts`; this one covers the
 * Redis that stops answering.
 */
export async function startPausableProxy(target: { host: string; port: number }): Promise<PausableProxy> {
  const sockets = new Set<Socket>();
  let paused = false;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      if (paused) socket.pause();
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    // Plain forwarding rather than pipe(): pipe() may resume a source that pause() stopped.
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => client.write(chunk));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the proxy has no port');
  return {
    port: address.port,
    pause() {
      paused = true;
      for (const socket of sockets) socket.pause();
    },
    resume() {
      paused = false;
      for (const socket of sockets) socket.resume();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
