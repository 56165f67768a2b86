import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { type Decision, RequestContext, routeToUser, toolCall } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import {
  endAgentSpan,
  endDecisionSpan,
  endTurnSpan,
  startAgentSpan,
  startDecisionSpan,
  startTurnSpan,
  TRACER_NAME,
  traceIdOf,
} from '../../src/tracing/spans.js';
import { useSpanRecording } from '../support/span-recording.js';

const turnInfo = {
  orchestrator: 'support',
  sessionId: 'ses_1',
  turnId: 'turn_1',
  userId: 'ada',
  input: 'hello',
};

function requestContext(): RequestContext {
  return new RequestContext({
    sessionId: 'ses_1',
    userId: 'ada',
    requestId: 'req_1',
    signal: new AbortController().signal,
    memory: () => {
      throw new Error('no memory in this test');
    },
  });
}

function only(spans: ReadableSpan[]): ReadableSpan {
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe('turn, decision and agent spans', () => {
  const recording = useSpanRecording();

  it('makes the turn a trace root named after the orchestrator, with session, user, input and output', () => {
    const outer = trace.getTracer('http').startSpan('POST /v1/chat');
    const turn = context.with(trace.setSpan(context.active(), outer), () => startTurnSpan(turnInfo));
    endTurnSpan(turn, { output: 'hi there', status: 'completed' });
    outer.end();

    const span = only(recording().named('support'));
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.instrumentationScope.name).toBe(TRACER_NAME);
    expect(span.attributes).toMatchObject({
      'langfuse.observation.type': 'agent',
      'langfuse.trace.name': 'support',
      'session.id': 'ses_1',
      'gen_ai.conversation.id': 'ses_1',
      'user.id': 'ada',
      'gen_ai.agent.name': 'support',
      'gen_ai.operation.name': 'invoke_agent',
      'switchboard.turn.id': 'turn_1',
      'switchboard.turn.status': 'completed',
      'langfuse.observation.input': '"hello"',
      'langfuse.trace.input': '"hello"',
      'langfuse.observation.output': '"hi there"',
      'langfuse.trace.output': '"hi there"',
    });
    expect(span.attributes).not.toHaveProperty('model');
    expect(traceIdOf(turn)).toBe(span.spanContext().traceId);
  });

  it('records a failed turn as an error', () => {
    const turn = startTurnSpan(turnInfo);
    endTurnSpan(turn, { output: 'Sorry', error: new Error('store down') });
    const span = only(recording().named('support'));
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'store down' });
    expect(span.events.map((event) => event.name)).toEqual(['exception']);
  });

  it('puts the orchestrator, candidates, hop, choice, thought and reason on a decision span', () => {
    const turn = startTurnSpan(turnInfo);
    const parent = trace.setSpan(context.active(), turn);
    const decision = RequestContext.run(requestContext(), () =>
      startDecisionSpan(parent, { orchestrator: 'support', hop: 0, candidates: ['billing', 'faq'] }),
    );
    endDecisionSpan(
      decision,
      toolCall('billing', 'refund order 7', { thought: 'money talk', reason: 'refund keyword' }),
    );
    endTurnSpan(turn, { output: 'done' });

    const span = only(recording().named('route 0'));
    expect(span.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(span.attributes).toMatchObject({
      'langfuse.observation.type': 'chain',
      'switchboard.orchestrator': 'support',
      'switchboard.hop': 0,
      'switchboard.candidates': ['billing', 'faq'],
      'switchboard.decision.kind': 'call',
      'switchboard.decision.agents': ['billing'],
      'switchboard.decision.thought': 'money talk',
      'switchboard.decision.reason': 'refund keyword',
      'session.id': 'ses_1',
      'user.id': 'ada',
    });
    const output = JSON.parse(String(span.attributes['langfuse.observation.output']));
    expect(output).toMatchObject({ kind: 'call', calls: [{ agent: 'billing', message: 'refund order 7' }] });
  });

  it('tells a fan-out, an answer and an error decision apart', () => {
    const parent = context.active();
    const fanOut = startDecisionSpan(parent, { orchestrator: 'o', hop: 0, candidates: ['a', 'b'] });
    endDecisionSpan(fanOut, [
      toolCall('a', 'x', { thought: 'first' }),
      toolCall('b', 'y', { reason: 'second' }),
    ]);
    const answer = startDecisionSpan(parent, { orchestrator: 'o', hop: 1, candidates: ['a', 'b'] });
    endDecisionSpan(answer, routeToUser('all done'));
    const failure = startDecisionSpan(parent, { orchestrator: 'o', hop: 2, candidates: ['a', 'b'] });
    endDecisionSpan(failure, { error: new Error('no idea'), userMessage: 'Sorry' });

    const fanOutSpan = only(recording().named('route 0'));
    expect(fanOutSpan.attributes).toMatchObject({
      'switchboard.decision.kind': 'fan-out',
      'switchboard.decision.agents': ['a', 'b'],
      'switchboard.decision.thought': ['first', ''],
      'switchboard.decision.reason': ['', 'second'],
    });
    expect(JSON.parse(String(fanOutSpan.attributes['langfuse.observation.output']))).toEqual({
      kind: 'fan-out',
      calls: [
        { toolCallId: expect.any(String), agent: 'a', message: 'x', thought: 'first' },
        { toolCallId: expect.any(String), agent: 'b', message: 'y', reason: 'second' },
      ],
    });
    expect(only(recording().named('route 1')).attributes).toMatchObject({
      'switchboard.decision.kind': 'answer',
      'switchboard.decision.agents': ['route_to_user'],
    });
    const error = only(recording().named('route 2'));
    expect(error.attributes['switchboard.decision.kind']).toBe('error');
    expect(error.attributes['langfuse.observation.level']).toBe('ERROR');
    expect(error.status).toEqual({ code: SpanStatusCode.ERROR, message: 'no idea' });
  });

  it('never fails on a malformed decision from a hand-written orchestrator', () => {
    const decision = startDecisionSpan(context.active(), { orchestrator: 'raw', hop: 0, candidates: [] });
    expect(() => endDecisionSpan(decision, null as unknown as Decision)).not.toThrow();
    expect(only(recording().named('route 0')).attributes['switchboard.decision.kind']).toBe('call');

    const odd = startDecisionSpan(context.active(), { orchestrator: 'raw', hop: 1, candidates: [] });
    const unserialisable = { toolName: 'a', message: 'x', thought: 10n } as unknown as Decision;
    expect(() => endDecisionSpan(odd, unserialisable)).not.toThrow();
    const output = JSON.parse(
      String(only(recording().named('route 1')).attributes['langfuse.observation.output']),
    );
    expect(output).toEqual({ kind: 'call', calls: [{ agent: 'a', message: 'x', thought: '10' }] });
  });

  it('records the candidates as they are when each decision starts', () => {
    const candidates = ['billing', 'faq'];
    const first = startDecisionSpan(context.active(), { orchestrator: 'o', hop: 0, candidates });
    endDecisionSpan(first, toolCall('billing', 'x'));
    candidates.push('sales');
    const second = startDecisionSpan(context.active(), { orchestrator: 'o', hop: 0, candidates });
    endDecisionSpan(second, toolCall('sales', 'y'));

    const [before, after] = recording().named('route 0');
    expect(before?.attributes['switchboard.candidates']).toEqual(['billing', 'faq']);
    expect(JSON.parse(String(before?.attributes['langfuse.observation.input']))).toEqual({
      hop: 0,
      candidates: ['billing', 'faq'],
    });
    expect(after?.attributes['switchboard.candidates']).toEqual(['billing', 'faq', 'sales']);
    expect(JSON.parse(String(after?.attributes['langfuse.observation.input']))).toEqual({
      hop: 0,
      candidates: ['billing', 'faq', 'sales'],
    });
  });

  it('records an agent call with its message, reply and status, and a failure as an error', () => {
    const parent = context.active();
    const ok = RequestContext.run(requestContext(), () =>
      startAgentSpan(parent, { agent: 'billing', toolCallId: 'call_1', message: 'refund' }),
    );
    endAgentSpan(ok, { status: 'ok', content: 'refunded' });
    const failed = startAgentSpan(parent, { agent: 'faq', toolCallId: 'call_2', message: 'why' });
    endAgentSpan(failed, { status: 'error', content: 'faq failed', error: new Error('faq crashed') });

    expect(only(recording().named('agent billing')).attributes).toMatchObject({
      'langfuse.observation.type': 'tool',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'billing',
      'gen_ai.tool.call.id': 'call_1',
      'langfuse.observation.input': '"refund"',
      'langfuse.observation.output': '"refunded"',
      'switchboard.agent.status': 'ok',
      'session.id': 'ses_1',
      'user.id': 'ada',
    });
    const error = only(recording().named('agent faq'));
    expect(error.status).toEqual({ code: SpanStatusCode.ERROR, message: 'faq crashed' });
    expect(error.events[0]?.attributes?.['exception.message']).toBe('faq crashed');
    expect(error.attributes['switchboard.agent.status']).toBe('error');
  });
});

describe('with tracing off', () => {
  it('records nothing, gives no trace id and never serialises inputs', () => {
    let serialised = 0;
    const input = {
      toString: () => 'hello',
      toJSON: () => {
        serialised++;
        return 'hello';
      },
    };
    const turn = startTurnSpan({ ...turnInfo, input: input as unknown as string });
    const decision = startDecisionSpan(trace.setSpan(context.active(), turn), {
      orchestrator: 'support',
      hop: 0,
      candidates: ['a'],
    });
    endDecisionSpan(decision, toolCall('a', 'x'));
    endTurnSpan(turn, { output: input as unknown as string });
    expect(turn.isRecording()).toBe(false);
    expect(traceIdOf(turn)).toBeUndefined();
    expect(serialised).toBe(0);
  });
});
