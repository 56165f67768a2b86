import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { recordSpans } from '../../src/testing/span-recorder.js';
import {
  endTurnSpan,
  startAgentSpan,
  startDecisionSpan,
  startTurnSpan,
  traceIdOf,
} from '../../src/tracing/spans.js';

const turnInfo = { orchestrator: 'support', sessionId: 'ses_1', turnId: 'turn_1', input: 'hello' };

describe('spans with tracing off', () => {
  it('records nothing and leaves no trace id, then records once a provider is registered', async () => {
    const turn = startTurnSpan(turnInfo);
    const turnContext = trace.setSpan(context.active(), turn);
    const decision = startDecisionSpan(turnContext, { orchestrator: 'support', hop: 0, candidates: ['a'] });
    const agent = startAgentSpan(trace.setSpan(turnContext, decision), {
      agent: 'a',
      toolCallId: 'call_1',
      message: 'hello',
    });
    for (const span of [turn, decision, agent]) {
      expect(span.isRecording()).toBe(false);
      expect(traceIdOf(span)).toBeUndefined();
    }
    endTurnSpan(turn, { output: 'hi', status: 'completed' });

    // Registered later (setupTracing after start): the next turn is traced, its decision under it.
    const recording = recordSpans();
    try {
      const traced = startTurnSpan(turnInfo);
      const tracedDecision = startDecisionSpan(trace.setSpan(context.active(), traced), {
        orchestrator: 'support',
        hop: 0,
        candidates: ['a'],
      });
      expect(traced.isRecording()).toBe(true);
      expect(tracedDecision.spanContext().traceId).toBe(traced.spanContext().traceId);
      tracedDecision.end();
      endTurnSpan(traced, { output: 'hi', status: 'completed' });
      expect(recording.named('support')).toHaveLength(1);
      expect(recording.named('route 0')).toHaveLength(1);
    } finally {
      await recording.shutdown();
    }
  });
});
