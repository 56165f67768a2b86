/**
 * How `app.start()` listens on a port with Node's HTTP server: a malformed
 * request still gets the JSON error shape, and stopping closes keep-alive
 * connections as soon as they are idle.
 *
 * @module
 */
import type { Socket } from 'node:net';
import { serve } from '@hono/node-server';

/** A Node server listening for an app's requests. */
export interface NodeListener {
  /** The URL it listens at, such as `http://127.0.0.1:3000`. */
  url: string;
  /** The port it listens on (the one the system chose for port 0). */
  port: number;
  /** Stops accepting connections; resolves once every connection is closed. */
  stopListening(): Promise<void>;
}

/** Serves `fetch` on `host`:`port`; resolves once the server listens, rejects when it cannot. */
export async function listen(
  fetch: (request: Request, env?: object) => Response | Promise<Response>,
  port: number,
  host: string,
): Promise<NodeListener> {
  const { server, address } = await new Promise<{
    server: ReturnType<typeof serve>;
    address: { port: number };
  }>((resolve, reject) => {
    const server = serve({ fetch, port, hostname: host }, (info) => resolve({ server, address: info }));
    server.once('error', reject);
  });
  // A request Node cannot even parse (a non-numeric Content-Length, say) still gets the JSON error shape.
  server.on('clientError', (_error: Error, socket: Socket) => {
    if (!socket.writable) return;
    const body = JSON.stringify({ error: { code: 'bad_request', message: 'Malformed HTTP request' } });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const stopListening = () =>
    new Promise<void>((resolve) => {
      const closeIdle = () => (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      // Keep-alive connections become idle only once their last response is sent.
      const sweep = setInterval(closeIdle, 50);
      server.close(() => {
        clearInterval(sweep);
        resolve();
      });
      closeIdle();
    });
  return { url: `http://${urlHost}:${address.port}`, port: address.port, stopListening };
}
