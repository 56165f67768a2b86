import {
  ConfigurationError,
  currentUserMessage,
  type Decision,
  latestToolResults,
  type MessageItem,
  routeToUser,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { type Agent, defineAgent } from '../../src/agents/agent.js';
import { type InnerStep, orchestratorAgent } from '../../src/agents/orchestrator-agent.js';
import type { TurnEvent } from '../../src/engine/events.js';
import type { TurnRecord } from '../../src/turns/turn-record.js';
import {
  createApp,
  echoAgent,
  failingAgent,
  relay,
  ScriptedOrchestrator,
  sleep,
} from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';

/** Calls `research` with the task, then `write` with its findings, then answers with the draft. */
function researchThenWrite(conversation: Parameters<ScriptedOrchestrator['decide']>[0]): Decision {
  const [last] = latestToolResults(conversation);
  if (!last) return toolCall('research', currentUserMessage(conversation).content, { reason: 'find facts' });
  if (last.status === 'error') return { error: new Error(`inner failure: ${last.metadata?.errorDetail}`) };
  if (last.name === 'research')
    return toolCall('write', `draft from ${last.content}`, { reason: 'write it up' });
  return routeToUser(last.content, { reason: 'the draft is ready' });
}

function team(overrides: Partial<Parameters<typeof orchestratorAgent>[0]> & { research?: Agent } = {}) {
  const seenByWriter: MessageItem[][] = [];
  const research =
    overrides.research ??
    defineAgent({ name: 'research', description: 'Finds facts', run: (task) => `facts about ${task}` });
  const write = defineAgent({
    name: 'write',
    description: 'Writes',
    run: (task, { conversation }) => {
      seenByWriter.push([...conversation.messages]);
      return `article (${task})`;
    },
  });
  const agents = [research, write];
  const agent = orchestratorAgent({
    name: 'team',
    description: 'Researches and writes',
    orchestrator: new ScriptedOrchestrator(agents, researchThenWrite, 'newsroom'),
    agents,
    ...overrides,
  });
  return { agent, seenByWriter };
}

async function storedMessages(app: ReturnType<typeof createApp>['app'], sessionId: string) {
  const response = await app.request(`/v1/sessions/${sessionId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { messages: MessageItem[]; turns: TurnRecord[] };
}

describe('orchestratorAgent', () => {
  const recording = useSpanRecording();

  it("answers with the inner turn's answer and keeps the inner steps under the outer call", async () => {
    const { agent, seenByWriter } = team();
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'team' }) });

    const result = await app.chat({ sessionId: 'nested-1', message: 'tides' });
    expect(result.reply).toBe('article (draft from facts about tides)');
    expect(result.status).toBe('completed');
    // The writer saw the inner conversation: the task, then the researcher's reply.
    expect(seenByWriter[0]?.map((message) => [message.role, message.content])).toEqual([
      ['user', 'tides'],
      ['tool', 'facts about tides'],
    ]);

    const { messages, turns } = await storedMessages(app, 'nested-1');
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'tides'],
      ['tool', 'article (draft from facts about tides)'],
      ['assistant', 'article (draft from facts about tides)'],
    ]);
    const innerSteps = messages[1]?.metadata?.innerSteps as InnerStep[];
    expect(innerSteps).toMatchObject([
      {
        hop: 0,
        kind: 'call',
        calls: [{ agent: 'research', message: 'tides', status: 'ok', reason: 'find facts' }],
      },
      {
        hop: 1,
        kind: 'call',
        calls: [{ agent: 'write', message: 'draft from facts about tides', status: 'ok' }],
      },
      { hop: 2, kind: 'answer', calls: [{ agent: 'route_to_user' }] },
    ]);
    expect(messages[1]?.metadata).toMatchObject({ orchestrator: 'newsroom', depth: 1 });
    // The outer turn's own steps are the outer decisions; the inner ones are under the call to the team.
    expect(turns[0]?.steps.map((step) => step.kind)).toEqual(['call', 'answer']);
    expect(turns[0]?.steps[0]?.calls[0]?.innerSteps).toEqual(innerSteps);
    expect(result.steps[0]?.calls[0]?.innerSteps).toEqual(innerSteps);
    await app.close();
  });

  it('keeps the inner steps that ran when the nested turn fails, with each failed call’s error code', async () => {
    const { agent } = team({ research: failingAgent('research', 'db password hunter2 rejected') });
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'team' }) });
    const result = await app.chat({ sessionId: 'nested-fail-steps', message: 'tides' });
    expect(result.reply).toBe("Sorry, the team agent failed: Agent 'team' failed (agent_error)");

    const { turns, messages } = await storedMessages(app, 'nested-fail-steps');
    const inner = turns[0]?.steps[0]?.calls[0]?.innerSteps;
    expect(inner).toMatchObject([
      { kind: 'call', calls: [{ agent: 'research', status: 'error', errorCode: 'agent_error' }] },
      { kind: 'error' },
    ]);
    expect(messages[1]?.metadata).toMatchObject({
      errorCode: 'agent_error',
      orchestrator: 'newsroom',
      depth: 1,
    });
    expect(JSON.stringify({ turns, messages })).not.toContain('hunter2');
    await app.close();
  });

  it('streams the inner calls’ events, each marked with the call to the orchestrator agent', async () => {
    const { agent } = team();
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'team' }) });
    const events: TurnEvent[] = [];
    const result = await app.chat({ message: 'tides', onEvent: (event) => events.push(event) });
    const outerCall = result.steps[0]?.calls[0]?.toolCallId;
    const agentEvents = events.flatMap((event) =>
      event.type === 'agent-start' || event.type === 'agent-end'
        ? [[event.type, event.agent, event.parentToolCallId]]
        : [],
    );
    expect(agentEvents).toEqual([
      ['agent-start', 'team', undefined],
      ['agent-start', 'research', outerCall],
      ['agent-end', 'research', outerCall],
      ['agent-start', 'write', outerCall],
      ['agent-end', 'write', outerCall],
      ['agent-end', 'team', undefined],
    ]);
    await app.close();
  });

  it("aborts the inner agents through their signals when the outer call's timeout ends it", async () => {
    const aborted: unknown[] = [];
    const research = defineAgent({
      name: 'research',
      description: 'Waits for its signal',
      async run(_task, { signal }) {
        try {
          await sleep(5_000, signal);
        } finally {
          aborted.push(signal.aborted ? signal.reason : 'not aborted');
        }
        return 'too late';
      },
    });
    const { agent } = team({ research, timeoutMs: 40 });
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'team' }) });

    const result = await app.chat({ message: 'tides' });
    expect(result.reply).toBe(
      "Sorry, the team agent failed: Agent 'team' timed out after 40 ms (agent_timeout)",
    );
    await sleep(10);
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toMatchObject({ code: 'agent_timeout', agent: 'team' });
    await app.close();
  });

  it('turns an inner failure into an error tool message with a safe description', async () => {
    const { agent } = team({ research: failingAgent('research', 'db password hunter2 rejected') });
    const { app, orchestrator } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'team' }) });

    const result = await app.chat({ sessionId: 'nested-fail', message: 'tides' });
    expect(result.reply).toBe("Sorry, the team agent failed: Agent 'team' failed (agent_error)");
    const { messages } = await storedMessages(app, 'nested-fail');
    const reply = messages[1] as ToolMessage;
    expect(reply).toMatchObject({
      role: 'tool',
      name: 'team',
      status: 'error',
      metadata: { errorCode: 'agent_error' },
    });
    expect(JSON.stringify(messages)).not.toContain('hunter2');
    // The outer orchestrator (in this process only) is told what went wrong inside.
    const seen = orchestrator.seen[1]?.lastResults?.[0];
    expect(seen?.metadata?.errorDetail).toContain("its orchestrator 'newsroom' failed");
    await app.close();
  });

  it('stops nesting past maxDepth with an error naming the limit', async () => {
    const seenErrors: string[] = [];
    const level = (depth: number, inner: Agent): Agent =>
      orchestratorAgent({
        name: `level${depth}`,
        description: `Nesting level ${depth}`,
        orchestrator: new ScriptedOrchestrator(
          [inner],
          (conversation) => {
            const [result] = latestToolResults(conversation);
            if (!result) return toolCall(inner.name, currentUserMessage(conversation).content);
            if (result.status === 'error') seenErrors.push(String(result.metadata?.errorDetail));
            return routeToUser(`${result.status}: ${result.content}`);
          },
          `router${depth}`,
        ),
        agents: [inner],
      });

    const threeLevels = level(1, level(2, level(3, echoAgent())));
    const shallow = createApp({ agents: [threeLevels], handler: relay({ defaultAgent: 'level1' }) }).app;
    expect((await shallow.chat({ message: 'hi' })).reply).toBe('ok: ok: ok: echo: hi');

    const fourLevels = level(1, level(2, level(3, level(4, echoAgent()))));
    const { app } = createApp({ agents: [fourLevels], handler: relay({ defaultAgent: 'level1' }) });
    const result = await app.chat({ message: 'hi' });
    expect(result.reply).toBe("ok: ok: error: Agent 'level4' failed (nesting_depth_exceeded)");
    expect(seenErrors).toEqual([
      "Agent 'level4' failed: nesting depth 4 exceeds maxDepth 3 (orchestrator agents calling orchestrator agents)",
    ]);
    // The stored steps say why, three levels down.
    const level3 =
      result.steps[0]?.calls[0]?.innerSteps?.[0]?.calls[0]?.innerSteps?.[0]?.calls[0]?.innerSteps;
    expect(level3?.[0]?.calls[0]).toMatchObject({
      agent: 'level4',
      status: 'error',
      errorCode: 'nesting_depth_exceeded',
    });
    await Promise.all([shallow.close(), app.close()]);
  });

  it('runs an inner fan-out concurrently', async () => {
    const runs: Record<string, { startedAt: number; endedAt?: number }> = {};
    const slow = (name: string) =>
      defineAgent({
        name,
        description: 'Slow',
        run: async (task, { signal }) => {
          const run: { startedAt: number; endedAt?: number } = { startedAt: performance.now() };
          runs[name] = run;
          await sleep(100, signal);
          run.endedAt = performance.now();
          return `${name}: ${task}`;
        },
      });
    const agents = [slow('north'), slow('south')];
    const agent = orchestratorAgent({
      name: 'survey',
      description: 'Asks both',
      orchestrator: new ScriptedOrchestrator(agents, (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(results.map((reply) => reply.content).join(' | '));
        return ['north', 'south'].map((name) => toolCall(name, 'weather'));
      }),
      agents,
    });
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'survey' }) });
    expect((await app.chat({ message: 'go' })).reply).toBe('north: weather | south: weather');
    // Overlap, not a wall-clock bound: each started before the other ended.
    const { north, south } = runs;
    expect(north!.startedAt).toBeLessThan(south!.endedAt!);
    expect(south!.startedAt).toBeLessThan(north!.endedAt!);
    await app.close();
  });

  it('traces the inner decisions and agent calls under the outer agent span', async () => {
    const { agent } = team();
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'team' }) });
    await app.chat({ message: 'tides' });

    const spans = recording();
    const [outer] = spans.named('agent team');
    expect(outer).toBeDefined();
    const innerDecisions = spans
      .named('route 0')
      .concat(spans.named('route 1'), spans.named('route 2'))
      .filter((span) => span.attributes['switchboard.orchestrator'] === 'newsroom');
    expect(innerDecisions).toHaveLength(3);
    for (const decision of innerDecisions) expect(spans.parentOf(decision)).toBe(outer);
    for (const name of ['agent research', 'agent write']) {
      const [call] = spans.named(name);
      const decision = call && spans.parentOf(call);
      expect(decision && innerDecisions.includes(decision)).toBe(true);
    }
    expect(outer?.spanContext().traceId).toBe(innerDecisions[0]?.spanContext().traceId);
    await app.close();
  });

  it('rejects an inner orchestrator that routes to agents it was not given', () => {
    const echo = echoAgent();
    expect(() =>
      orchestratorAgent({
        name: 'team',
        description: 'Broken',
        orchestrator: new ScriptedOrchestrator([echo, echoAgent('other')], relay()),
        agents: [echo],
      }),
    ).toThrow(ConfigurationError);
  });
});
