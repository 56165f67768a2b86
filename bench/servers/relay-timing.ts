import diagnostics from 'node:diagnostics_channel';
import { ServerResponse } from 'node:http';

/** A relay's own part of a first delta, per request, in ms (see {@link timeRelay}). */
export interface RelayTiming {
  /** From the request's arrival to the model request's creation (the `openai` client's fetch). */
  toModelMs: number[];
  /** From the model's response headers to the relay's first write after them (its first delta). */
  toFirstWriteMs: number[];
}

/**
 * Times, in a relay's process, the two stretches of a first delta that are the relay's own: before it asks the
 * model, and from the model's answer to its first write. Valid for requests one at a time (the stream-relay
 * bench's first-delta phase); `take` returns what was timed since the last call.
 */
export function timeRelay(): { take(): RelayTiming } {
  let requestAt = 0;
  let modelAskedAt = 0;
  let modelAnsweredAt = 0;
  let timing: RelayTiming = { toModelMs: [], toFirstWriteMs: [] };
  diagnostics.subscribe('http.server.request.start', () => {
    requestAt = performance.now();
    modelAnsweredAt = 0;
  });
  diagnostics.subscribe('undici:request:create', () => {
    modelAskedAt = performance.now();
  });
  diagnostics.subscribe('undici:request:headers', () => {
    modelAnsweredAt = performance.now();
  });
  const write = ServerResponse.prototype.write;
  ServerResponse.prototype.write = function (this: ServerResponse, ...args: unknown[]) {
    if (modelAnsweredAt !== 0) {
      timing.toModelMs.push(modelAskedAt - requestAt);
      timing.toFirstWriteMs.push(performance.now() - modelAnsweredAt);
      modelAnsweredAt = 0;
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  return {
    take() {
      const taken = timing;
      timing = { toModelMs: [], toFirstWriteMs: [] };
      return taken;
    },
  };
}
