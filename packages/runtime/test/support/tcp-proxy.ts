import { connect, createServer, type Server, type Socket } from 'node:net';

/** A loopback TCP proxy in front of a server, to count round trips and to simulate outages. */
export interface TcpProxy {
  readonly port: number;
  /**
   * Request/reply exchanges seen so far: each time a client sends data after
   * having received a reply (or for the first time) counts one. A pipeline
   * sent in one go counts once, as it costs one network round trip.
   */
  readonly roundTrips: number;
  /** What clients sent since the last reset, as latin1 text (for counting commands). */
  readonly sent: string;
  resetCount(): void;
  /** Stops listening and cuts every connection: the target looks down. */
  stop(): Promise<void>;
  /** Listens again on the same port: the target is back. */
  start(): Promise<void>;
  /**
   * Holds what clients send from now on (nothing reaches the target, as from a
   * paused process) until {@link TcpProxy.resume}, which sends it all in order.
   */
  hold(): void;
  resume(): void;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Starts a proxy on a free loopback port that forwards to `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let roundTrips = 0;
  let sent = '';
  let held: Array<() => void> | undefined;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    let awaitingReply = false;
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (!awaitingReply) roundTrips += 1;
      awaitingReply = true;
      sent += chunk.toString('latin1');
      if (held) held.push(() => upstream.write(chunk));
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      awaitingReply = false;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  let port = await listen(server, 0);
  return {
    get port() {
      return port;
    },
    get roundTrips() {
      return roundTrips;
    },
    get sent() {
      return sent;
    },
    resetCount() {
      roundTrips = 0;
      sent = '';
    },
    stop() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      return new Promise((resolve) => server.close(() => resolve()));
    },
    async start() {
      port = await listen(server, port);
    },
    hold() {
      held ??= [];
    },
    resume() {
      const writes = held ?? [];
      held = undefined;
      for (const write of writes) write();
    },
  };
}

/** A server that accepts connections and never answers: a hung Redis. */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listen(server, 0);
  return {
    port,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
