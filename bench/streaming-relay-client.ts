import { type Agent, request } from 'node:http';

/** What a client saw of one streamed turn. */
export interface StreamedTurn {
  /** From sending the request to receiving the first delta, in ms (NaN when none came). */
  firstDeltaMs: number;
  /** The text deltas received. */
  deltas: number;
  /** The SSE events received, deltas or not. */
  events: number;
  /** The pieces the response body arrived in (socket reads): what the client can tell apart. */
  reads: number;
  ok: boolean;
}

/** Which SSE events of a stream carry a text delta. */
export type DeltaTest = (event: string | undefined, data: string) => boolean;

/** A `chat.completion.chunk` with non-empty `choices[0].delta.content` (the model, `/v1/chat/completions`). */
export const completionDelta: DeltaTest = (_event, data) => {
  if (data === '[DONE]') return false;
  const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] };
  return Boolean(chunk.choices?.[0]?.delta?.content);
};

/** An event of the given SSE type (`agent-delta` on `/v1/chat`, `delta` on the bare relay). */
export const eventDelta =
  (type: string): DeltaTest =>
  (event) =>
    event === type;

/**
 * POSTs `body` to a loopback URL, reads its Server-Sent Events as they arrive and times the first delta.
 */
export function streamTurn(url: URL, body: string, isDelta: DeltaTest, agent: Agent): Promise<StreamedTurn> {
  return new Promise((resolve) => {
    const started = performance.now();
    const turn: StreamedTurn = { firstDeltaMs: Number.NaN, deltas: 0, events: 0, reads: 0, ok: false };
    let buffered = '';
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          turn.reads++;
          buffered += text;
          let end = buffered.indexOf('\n\n');
          while (end !== -1) {
            const frame = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            end = buffered.indexOf('\n\n');
            let event: string | undefined;
            let data = '';
            for (const line of frame.split('\n')) {
              if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data += line.slice(6);
            }
            turn.events++;
            if (isDelta(event, data)) {
              if (turn.deltas === 0) turn.firstDeltaMs = performance.now() - started;
              turn.deltas++;
            }
          }
        });
        res.on('end', () => {
          turn.ok = res.statusCode === 200;
          resolve(turn);
        });
      },
    );
    req.on('error', () => resolve(turn));
    req.end(body);
  });
}
