import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a {@link Receiver} got. */
export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  /** The raw body, as a receiver verifies it. */
  body: string;
}

/** Answers one request; `index` counts this path's requests from 0. */
export type ReceiverHandler = (response: ServerResponse, index: number, request: IncomingMessage) => void;

/** A callback receiver on 127.0.0.1 (a free port): each path has its own handler and its own list of requests. */
export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Sets the handler of `path` and returns the path's URL. */
  route(path: string, handler: ReceiverHandler): string;
  /** What `path` received so far, in order. */
  received(path: string): ReceivedRequest[];
  /** How many of `path`'s requests are open now, and the most that were open at once. */
  open(path: string): { now: number; most: number };
  close(): Promise<void>;
}

/** Starts a {@link Receiver}. */
export async function startReceiver(): Promise<Receiver> {
  const handlers = new Map<string, ReceiverHandler>();
  const requests = new Map<string, ReceivedRequest[]>();
  const openCounts = new Map<string, { now: number; most: number }>();
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const list = requests.get(path) ?? [];
      requests.set(path, list);
      list.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      const count = openCounts.get(path) ?? { now: 0, most: 0 };
      openCounts.set(path, count);
      count.now += 1;
      count.most = Math.max(count.most, count.now);
      response.on('close', () => {
        count.now -= 1;
      });
      const handler = handlers.get(path);
      if (handler) handler(response, list.length - 1, request);
      else response.writeHead(404).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    route(path, handler) {
      handlers.set(path, handler);
      return origin + path;
    },
    received: (path) => requests.get(path) ?? [],
    open: (path) => ({ ...(openCounts.get(path) ?? { now: 0, most: 0 }) }),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
