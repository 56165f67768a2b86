import { expect } from 'vitest';

/** One server-sent event of a streamed turn. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * Starts a streamed turn (`POST /v1/chat` with `accept: text/event-stream`):
 * `running` resolves once an agent started, `events` with every event once the stream ended.
 */
export function streamTurn(url: string, message: string) {
  let markRunning: () => void = () => {};
  const running = new Promise<void>((resolve) => {
    markRunning = resolve;
  });
  const events = (async () => {
    const response = await fetch(`${url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message }),
    });
    expect(response.status).toBe(200);
    const received: SseEvent[] = [];
    let buffer = '';
    const decoder = new TextDecoder();
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (event && data) received.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        if (event === 'agent-start') markRunning();
      }
    }
    return received;
  })();
  events.catch(() => {});
  return { running, events };
}
