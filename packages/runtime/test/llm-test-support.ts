import { trace } from '@opentelemetry/api';
import { type Conversation, RequestContext, toolCall } from '@switchboard/core';
import type { AgentContext, AgentReply } from '../src/agents/agent.js';
import type { llmAgent } from '../src/agents/llm-agent.js';

/** An agent context like the engine's, for calling `agent.run` directly. */
export function agentContext(signal: AbortSignal = new AbortController().signal): AgentContext {
  const call = toolCall('assistant', 'task');
  const conversation: Conversation = {
    sessionId: 'session-1',
    turnId: 'turn-1',
    messages: [{ id: 'm1', role: 'user', content: 'task', createdAt: new Date().toISOString() }],
    turnStart: 0,
    hop: 0,
    agents: [],
  };
  const request = new RequestContext({
    sessionId: 'session-1',
    requestId: 'request-1',
    signal,
    memory: () => {
      throw new Error('no memory in this test');
    },
  });
  return {
    signal,
    toolCall: call,
    conversation,
    request,
    idempotencyKey: `${conversation.turnId}/${call.id}`,
  };
}

/**
 * Runs an agent the way the engine does: inside an active span named `agent under test`,
 * collecting streamed deltas.
 */
export async function runAgent(agent: ReturnType<typeof llmAgent>, message: string, signal?: AbortSignal) {
  return trace.getTracer('test').startActiveSpan('agent under test', async (span) => {
    try {
      const reply: AgentReply = await agent.run(message, agentContext(signal));
      if (typeof reply === 'string') return { content: reply, deltas: [reply] };
      if (!(Symbol.asyncIterator in reply))
        return { content: reply.content, deltas: [], metadata: reply.metadata };
      const deltas: string[] = [];
      for await (const delta of reply) deltas.push(delta);
      return { content: deltas.join(''), deltas };
    } finally {
      span.end();
    }
  });
}
