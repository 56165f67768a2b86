import { ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/**
 * Counts, in a relay's process, the writes its responses make (`res.write` calls) and the writes its sockets
 * hand to the kernel (Node corks a response's writes of one tick into one `writev`), so that the stream-relay
 * bench can tell how many writes a turn's deltas took. Both relays pay the same two counters.
 */
export function countWrites(): () => { responseWrites: number; socketWrites: number } {
  let responseWrites = 0;
  let socketWrites = 0;
  const write = ServerResponse.prototype.write;
  ServerResponse.prototype.write = function (this: ServerResponse, ...args: unknown[]) {
    responseWrites++;
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  const socket = Socket.prototype as unknown as Record<'_write' | '_writev', (...a: unknown[]) => void>;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method];
    socket[method] = function (this: Socket, ...args: unknown[]) {
      socketWrites++;
      return original.apply(this, args);
    };
  }
  return () => ({ responseWrites, socketWrites });
}
