import type { MessageItem } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/engine/events.js';
import {
  echoAgent,
  fanOut,
  loopForever,
  postJson,
  type ReceivedEvent,
  readEventStream,
  slowAgent,
  streamingAgent,
} from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';
import { type Served, transports } from './transports.js';

interface ChatBody {
  sessionId: string;
  turnId: string;
  reply: string;
  status: string;
  traceId?: string;
  steps: Array<{
    hop: number;
    kind: string;
    calls: Array<{ agent: string; thought?: string; reason?: string }>;
  }>;
}

/** An OpenTelemetry / Langfuse trace id: 32 lowercase hex digits. */
const TRACE_ID = /^[0-9a-f]{32}$/;

type EventOf<T extends TurnEvent['type']> = Extract<TurnEvent, { type: T }>;

function eventsOf<T extends TurnEvent['type']>(events: ReceivedEvent[], type: T): EventOf<T>[] {
  return events.filter((event) => event.data.type === type).map((event) => event.data as EventOf<T>);
}

describe.each(transports)('POST /v1/chat via $name', (transport) => {
  let served: Served;
  afterEach(() => served?.close());

  const serve = async (options: Parameters<typeof transport.serve>[0]) => {
    served = await transport.serve(options);
    return served;
  };
  const chat = async (body: unknown, headers?: Record<string, string>) => {
    const response = await served.send('/v1/chat', postJson(body, headers));
    return { response, body: (await response.json()) as ChatBody };
  };

  it('answers JSON with the reply, the status and every routing step with agent, thought and reason', async () => {
    await serve({ agents: [echoAgent()] });
    const { response, body } = await chat({ message: 'hello there' });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(body).toMatchObject({ reply: 'echo: hello there', status: 'completed' });
    expect(body.sessionId).toMatch(/^\S+$/);
    expect(body.turnId).toMatch(/^\S+$/);
    expect(body.steps).toMatchObject([
      {
        hop: 0,
        kind: 'call',
        calls: [{ agent: 'echo', thought: 'The user wants the echo agent', reason: 'default agent' }],
      },
      { hop: 1, kind: 'answer', calls: [{ agent: 'route_to_user', reason: 'the agent answered' }] },
    ]);
  });

  it('generates a new session id when none is given and reuses the one given', async () => {
    await serve({ agents: [echoAgent()] });
    const first = await chat({ message: 'one' });
    const other = await chat({ message: 'two' });
    expect(other.body.sessionId).not.toBe(first.body.sessionId);

    const again = await chat({ message: 'three', sessionId: first.body.sessionId });
    expect(again.body.sessionId).toBe(first.body.sessionId);
    expect(again.body.turnId).not.toBe(first.body.turnId);

    const history = (await (await served.send(`/v1/sessions/${first.body.sessionId}`)).json()) as {
      messages: MessageItem[];
      turns: unknown[];
    };
    expect(
      history.messages.filter((message) => message.role === 'user').map((message) => message.content),
    ).toEqual(['one', 'three']);
    expect(history.turns).toHaveLength(2);
  });

  it.each([
    ['Accept: text/event-stream', {}, { accept: 'text/event-stream' }],
    ['"stream": true', { stream: true }, {}],
  ])('streams the turn as Server-Sent Events with %s', async (_how, extra, headers) => {
    await serve({ agents: [echoAgent(), streamingAgent('streamer', ['Hel', 'lo ', 'world'])] });
    const response = await served.send(
      '/v1/chat',
      postJson({ message: 'streamer: greet me', sessionId: 'sse-1', ...extra }, headers),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEventStream(response);

    expect(events.map((event) => event.event)).toEqual([
      'turn-start',
      'route',
      'agent-start',
      'agent-delta',
      'agent-delta',
      'agent-delta',
      'agent-end',
      'route',
      'message',
      'turn-end',
    ]);
    const turnId = events[0]!.data.turnId;
    for (const { event, data } of events) {
      expect(data.type).toBe(event);
      expect(data).toMatchObject({ sessionId: 'sse-1', turnId });
      expect(data.messageId).toMatch(/^\S+$/);
    }
    // The agent's message: one messageId for its start, chunks and end; only the end closes it.
    const agentEvents = events.filter((event) => event.event.startsWith('agent-')).map((event) => event.data);
    expect(new Set(agentEvents.map((event) => event.messageId)).size).toBe(1);
    expect(eventsOf(events, 'agent-delta').map((event) => event.delta)).toEqual(['Hel', 'lo ', 'world']);
    expect(eventsOf(events, 'agent-delta').every((event) => !event.endOfMessage)).toBe(true);
    expect(eventsOf(events, 'agent-end')[0]).toMatchObject({
      content: 'Hello world',
      status: 'ok',
      endOfMessage: true,
    });
    expect(eventsOf(events, 'message')[0]).toMatchObject({ content: 'Hello world', endOfMessage: true });
    // Only the last event ends the dialog.
    expect(events.map((event) => event.data.endOfDialog === true)).toEqual([
      ...events.map(() => false).slice(1),
      true,
    ]);
    expect(eventsOf(events, 'turn-end')[0]).toMatchObject({ status: 'completed', endOfDialog: true });

    // The ids in the stream are the ids of the stored messages.
    const history = (await (await served.send('/v1/sessions/sse-1')).json()) as { messages: MessageItem[] };
    expect(history.messages.map((message) => message.id)).toEqual([
      events[0]!.data.messageId,
      agentEvents[0]!.messageId,
      eventsOf(events, 'message')[0]!.messageId,
    ]);
  });

  it('tells parallel agents apart in the stream by toolCallId', async () => {
    await serve({
      agents: [slowAgent('maps', 30), slowAgent('weather', 10)],
      handler: fanOut(['maps', 'weather']),
    });
    const response = await served.send(
      '/v1/chat',
      postJson({ message: 'plan a hike' }, { accept: 'text/event-stream' }),
    );
    const events = await readEventStream(response);

    const [fanOutStep] = eventsOf(events, 'route').map((event) => event.step);
    expect(fanOutStep).toMatchObject({ kind: 'fan-out', calls: [{ agent: 'maps' }, { agent: 'weather' }] });
    const starts = eventsOf(events, 'agent-start');
    const ends = eventsOf(events, 'agent-end');
    expect(starts.map((event) => event.toolCallId)).toEqual(fanOutStep!.calls.map((call) => call.toolCallId));
    for (const start of starts) {
      const end = ends.find((event) => event.toolCallId === start.toolCallId);
      expect(end).toMatchObject({
        agent: start.agent,
        messageId: start.messageId,
        content: `${start.agent} done: plan a hike`,
      });
    }
    expect(starts[0]!.messageId).not.toBe(starts[1]!.messageId);
    // weather (10 ms) finished before maps (30 ms): the stream shows it as it happened.
    expect(ends.map((event) => event.agent)).toEqual(['weather', 'maps']);
    expect(eventsOf(events, 'message')[0]!.content).toBe('maps done: plan a hike\nweather done: plan a hike');
  });

  it('streams a failed turn as an error event, the safe reply and a failed turn-end', async () => {
    await serve({ agents: [echoAgent()], handler: loopForever(), maxHops: 2 });
    const response = await served.send('/v1/chat', postJson({ message: 'loop', stream: true }));
    const events = await readEventStream(response);

    expect(events.slice(-3).map((event) => event.event)).toEqual(['error', 'message', 'turn-end']);
    const [error] = eventsOf(events, 'error');
    const [message] = eventsOf(events, 'message');
    expect(error).toMatchObject({ code: 'max_hops_exceeded' });
    expect(message!.content).toMatch(/something went wrong/i);
    expect(eventsOf(events, 'turn-end')[0]).toMatchObject({ status: 'failed', endOfDialog: true });
  });

  it('sends no traceId while tracing is off, neither in turn-end nor in the JSON answer', async () => {
    await serve({ agents: [echoAgent()] });
    const response = await served.send('/v1/chat', postJson({ message: 'untraced', stream: true }));
    const [turnEnd] = eventsOf(await readEventStream(response), 'turn-end');
    expect(turnEnd).toMatchObject({ status: 'completed' });
    expect(turnEnd).not.toHaveProperty('traceId');

    const { body } = await chat({ message: 'untraced too' });
    expect(body.reply).toBe('echo: untraced too');
    expect(body).not.toHaveProperty('traceId');
  });

  describe('with span recording on', () => {
    const recording = useSpanRecording();

    it("ends the SSE stream with a turn-end carrying the turn's trace id", async () => {
      await serve({ agents: [echoAgent()] });
      const response = await served.send(
        '/v1/chat',
        postJson({ message: 'trace me', sessionId: 'traced-sse', stream: true }),
      );
      const events = await readEventStream(response);
      const [turnEnd] = eventsOf(events, 'turn-end');
      expect(turnEnd).toMatchObject({ status: 'completed', endOfDialog: true });
      expect(turnEnd!.traceId).toMatch(TRACE_ID);

      // The trace: one root span for the turn (named after the orchestrator), every span of the turn in it.
      const [turnSpan, ...others] = recording().named(served.orchestrator.name);
      expect(others).toEqual([]);
      expect(turnSpan!.attributes['session.id']).toBe('traced-sse');
      expect(turnEnd!.traceId).toBe(turnSpan!.spanContext().traceId);
      expect(recording().spans.length).toBeGreaterThan(1);
      expect(new Set(recording().spans.map((span) => span.spanContext().traceId))).toEqual(
        new Set([turnEnd!.traceId]),
      );
      // Only turn-end carries it.
      expect(events.filter((event) => 'traceId' in event.data).map((event) => event.event)).toEqual([
        'turn-end',
      ]);
    });

    it('gives each turn its own trace id, also in the JSON answer', async () => {
      await serve({ agents: [echoAgent()] });
      const first = await chat({ message: 'one', sessionId: 'traced-json' });
      const second = await chat({ message: 'two', sessionId: 'traced-json' });
      expect(first.body.traceId).toMatch(TRACE_ID);
      expect(second.body.traceId).toMatch(TRACE_ID);
      expect(second.body.traceId).not.toBe(first.body.traceId);
      expect(
        recording()
          .named(served.orchestrator.name)
          .map((span) => span.spanContext().traceId),
      ).toEqual([first.body.traceId, second.body.traceId]);
    });
  });
});
