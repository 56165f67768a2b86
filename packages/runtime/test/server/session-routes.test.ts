import type { MessageItem } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnRecord } from '../../src/stores/session-store.js';
import { echoAgent, postJson, streamingAgent, visitCounterAgent } from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';
import { type Served, transports } from './transports.js';

/** An OpenTelemetry / Langfuse trace id: 32 lowercase hex digits. */
const TRACE_ID = /^[0-9a-f]{32}$/;

interface ErrorBody {
  error: { code: string; message: string; issues?: string[] };
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: unknown;
  maxLength?: number;
  minLength?: number;
}

describe.each(transports)('session, agent, health and document routes via $name', (transport) => {
  let served: Served;
  afterEach(() => served?.close());

  const serve = async (options: Parameters<typeof transport.serve>[0]) => {
    served = await transport.serve(options);
    return served;
  };
  const chat = async (body: object) => served.send('/v1/chat', postJson(body));
  const json = async <T>(response: Response) => (await response.json()) as T;

  it('GET /v1/sessions/:id returns the messages and the turns with their routing steps', async () => {
    await serve({ agents: [echoAgent()] });
    await chat({ message: 'first', sessionId: 'history-1' });
    await chat({ message: 'second', sessionId: 'history-1' });

    const response = await served.send('/v1/sessions/history-1');
    expect(response.status).toBe(200);
    const body = await json<{ sessionId: string; messages: MessageItem[]; turns: TurnRecord[] }>(response);
    expect(body.sessionId).toBe('history-1');
    expect(body.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'first'],
      ['tool', 'echo: first'],
      ['assistant', 'echo: first'],
      ['user', 'second'],
      ['tool', 'echo: second'],
      ['assistant', 'echo: second'],
    ]);
    expect(body.turns).toHaveLength(2);
    expect(body.turns[1]).toMatchObject({
      userMessageId: body.messages[3]!.id,
      status: 'completed',
      steps: [
        {
          kind: 'call',
          calls: [{ agent: 'echo', thought: 'The user wants the echo agent', reason: 'default agent' }],
        },
        { kind: 'answer', calls: [{ agent: 'route_to_user' }] },
      ],
    });
  });

  it('GET /v1/sessions/:id lists no traceId on any turn while tracing is off', async () => {
    await serve({ agents: [echoAgent()] });
    await chat({ message: 'first', sessionId: 'untraced-history' });
    await chat({ message: 'second', sessionId: 'untraced-history' });

    const body = await json<{ turns: TurnRecord[] }>(await served.send('/v1/sessions/untraced-history'));
    expect(body.turns).toHaveLength(2);
    for (const turn of body.turns) {
      expect(turn.status).toBe('completed');
      expect(turn).not.toHaveProperty('traceId');
    }
  });

  describe('with span recording on', () => {
    const recording = useSpanRecording();

    it('GET /v1/sessions/:id lists each turn with the trace id its chat answer gave', async () => {
      await serve({ agents: [echoAgent()] });
      const answers = [];
      for (const message of ['first', 'second', 'third'])
        answers.push(
          await json<{ turnId: string; traceId?: string }>(
            await chat({ message, sessionId: 'traced-history' }),
          ),
        );

      const body = await json<{ turns: TurnRecord[] }>(await served.send('/v1/sessions/traced-history'));
      expect(body.turns.map((turn) => ({ turnId: turn.turnId, traceId: turn.traceId }))).toEqual(
        answers.map(({ turnId, traceId }) => ({ turnId, traceId })),
      );
      for (const turn of body.turns) expect(turn.traceId).toMatch(TRACE_ID);
      expect(new Set(body.turns.map((turn) => turn.traceId)).size).toBe(3);
      // They are the traces that were recorded: one root span per turn.
      expect(
        recording()
          .named(served.orchestrator.name)
          .map((span) => span.spanContext().traceId),
      ).toEqual(body.turns.map((turn) => turn.traceId));
    });
  });

  it('GET of an unknown session is a 404 JSON error naming it', async () => {
    await serve({ agents: [echoAgent()] });
    const response = await served.send('/v1/sessions/never-seen');
    expect(response.status).toBe(404);
    const body = await json<ErrorBody>(response);
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toContain('never-seen');
  });

  it('DELETE /v1/sessions/:id answers 204, forgets the history and clears the session memory', async () => {
    await serve({ agents: [visitCounterAgent()] });
    const visit = async () =>
      json<{ reply: string }>(await chat({ message: 'counter: hi', sessionId: 'doomed' }));
    expect((await visit()).reply).toBe('visit 1');
    expect((await visit()).reply).toBe('visit 2');

    const deleted = await served.send('/v1/sessions/doomed', { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await served.send('/v1/sessions/doomed')).status).toBe(404);
    expect((await served.send('/v1/sessions/doomed', { method: 'DELETE' })).status).toBe(404);

    // The same session id starts from scratch: no history, no memory.
    expect((await visit()).reply).toBe('visit 1');
    const history = await json<{ messages: MessageItem[] }>(await served.send('/v1/sessions/doomed'));
    expect(history.messages).toHaveLength(3);
  });

  it('GET /v1/agents lists every hosted agent with its metadata and nothing of its implementation', async () => {
    await serve({ agents: [echoAgent(), streamingAgent('streamer')] });
    const response = await served.send('/v1/agents');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      agents: [
        { name: 'echo', description: 'Repeats the message', keywords: ['echo'] },
        { name: 'streamer', description: 'Streams its answer in chunks' },
      ],
    });
  });

  it('GET /healthz and /readyz answer 200 while the app runs', async () => {
    await serve({ agents: [echoAgent()] });
    const health = await served.send('/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await served.send('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('GET /openapi.json is an OpenAPI 3.1 document with the chat request schema and every route', async () => {
    await serve({ agents: [echoAgent()], name: 'weather-desk', maxMessageLength: 500 });
    const response = await served.send('/openapi.json');
    expect(response.status).toBe(200);
    const document = await json<{
      openapi: string;
      info: { title: string; version: string };
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>
      >;
    }>(response);

    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toContain('weather-desk');
    expect(Object.keys(document.paths).sort()).toEqual([
      '/healthz',
      '/readyz',
      '/v1/agents',
      '/v1/background-turns',
      '/v1/chat',
      '/v1/chat/completions',
      '/v1/config',
      '/v1/config/{type}/{name}',
      '/v1/config/{type}/{name}/diff',
      '/v1/config/{type}/{name}/rollback',
      '/v1/config/{type}/{name}/versions',
      '/v1/models',
      '/v1/responses',
      '/v1/responses/{id}',
      '/v1/schedules',
      '/v1/schedules/{id}',
      '/v1/sessions',
      '/v1/sessions/{id}',
      '/v1/sessions/{id}/approvals/{approvalId}',
      '/v1/sessions/{id}/export',
      '/v1/sessions/{id}/turns/{turnId}',
      '/v1/sessions/{id}/turns/{turnId}/cancel',
      '/v1/sessions/{id}/turns/{turnId}/events',
      '/v1/usage',
    ]);
    expect(Object.keys(document.paths['/v1/sessions/{id}']!).sort()).toEqual(['delete', 'get']);
    const schema = document.paths['/v1/chat']!.post!.requestBody!.content['application/json']!.schema;
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(['message']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties?.message).toMatchObject({ type: 'string', minLength: 1, maxLength: 500 });
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual([
      'background',
      'callbackUrl',
      'concurrency',
      'message',
      'metadata',
      'onDisconnect',
      'sessionId',
      'stream',
      'userId',
    ]);
  });

  it.each([
    ['GET', '/v1/nothing-here'],
    ['GET', '/v1/nothing/here/either'],
  ])('an unknown route (%s %s) is a 404 JSON error', async (method, path) => {
    await serve({ agents: [echoAgent()] });
    const response = await served.send(path, { method });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = await json<ErrorBody>(response);
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toContain(path);
  });

  it.each([
    ['GET', '/v1/chat', 'POST'],
    ['PUT', '/v1/chat', 'POST'],
    ['POST', '/v1/agents', 'GET'],
    ['PATCH', '/v1/sessions/s1', 'GET, DELETE'],
    ['PATCH', '/v1/config/keywords/echo', 'GET, PUT, DELETE'],
  ])(
    'a known route asked with another method (%s %s) is a 405 JSON error naming what it allows',
    async (method, path, allow) => {
      await serve({ agents: [echoAgent()] });
      const response = await served.send(path, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe(allow);
      const body = await json<ErrorBody>(response);
      expect(body.error.code).toBe('method_not_allowed');
    },
  );
});
