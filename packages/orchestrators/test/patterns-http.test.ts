import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  type MessageItem,
  type Orchestrator,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import {
  type Agent,
  App,
  agentMeta,
  defineAgent,
  type InnerStep,
  orchestratorAgent,
  type RouteStep,
  type TurnEvent,
  type TurnRecord,
  type TurnResult,
} from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEventStream, postJson } from '../../runtime/test/support/app-fixtures.js';
import { ConsensusOrchestrator, SequentialOrchestrator } from '../src/index.js';

/** What a thrown error carries that no HTTP answer may show. */
const SECRET = 'ECONNREFUSED 10.0.0.7:5432 at Pool.connect (/srv/app/db.js:12:7)';
const SECRET_PARTS = ['ECONNREFUSED', '10.0.0.7', '/srv/app'];

/** The answer of `GET /v1/sessions/:id`. */
interface SessionBody {
  sessionId: string;
  messages: MessageItem[];
  turns: TurnRecord[];
}

type EventOf<T extends TurnEvent['type']> = Extract<TurnEvent, { type: T }>;

function eventsOf<T extends TurnEvent['type']>(events: readonly TurnEvent[], type: T): EventOf<T>[] {
  return events.filter((event): event is EventOf<T> => event.type === type);
}

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** An app hosting `agents` with `orchestrator` mounted, and what a client does with it over HTTP. */
function serve(orchestrator: Orchestrator, agents: readonly Agent[]) {
  const app = new App({ name: 'patterns', agents, logLevel: 'silent' }).mount(orchestrator);
  apps.push(app);
  return {
    /** `POST /v1/chat` answered as JSON. */
    async chat(body: object) {
      const response = await app.request('/v1/chat', postJson(body));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/json');
      return (await response.json()) as TurnResult;
    },
    /** `POST /v1/chat` with `accept: text/event-stream`: the raw text and the events. */
    async stream(body: object) {
      const response = await app.request('/v1/chat', postJson(body, { accept: 'text/event-stream' }));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const text = await response.text();
      return { text, events: parseEventStream(text).map((event) => event.data) };
    },
    /** `GET /v1/sessions/:id`. */
    async session(sessionId: string) {
      const response = await app.request(`/v1/sessions/${sessionId}`);
      expect(response.status).toBe(200);
      return (await response.json()) as SessionBody;
    },
  };
}

function callsOf(steps: readonly RouteStep[]) {
  return steps.map((step) => [step.kind, step.calls.map((call) => call.agent)]);
}

/** The inner steps an orchestrator agent keeps on its stored reply. */
function innerStepsOf(reply: MessageItem | undefined): InnerStep[] {
  const steps = reply?.metadata?.innerSteps;
  expect(Array.isArray(steps), 'the reply keeps its inner steps').toBe(true);
  return steps as InnerStep[];
}

function expectNoSecret(text: string): void {
  for (const part of SECRET_PARTS) expect(text).not.toContain(part);
}

describe('SequentialOrchestrator over HTTP', () => {
  /** Stages that transform their input and record what each was given. */
  function pipeline(stages: string[]) {
    const received: Array<[string, string]> = [];
    const stage = (name: string, transform: (text: string) => string) =>
      defineAgent({
        name,
        description: `${name} stage`,
        run: (message) => {
          received.push([name, message]);
          return transform(message);
        },
      });
    const agents = [
      stage('draft', (text) => `draft of "${text}"`),
      stage('shout', (text) => text.toUpperCase()),
      stage('sign', (text) => `${text} -- signed`),
      stage('broken', () => {
        throw new Error(SECRET);
      }),
    ];
    const orchestrator = new SequentialOrchestrator({ agents: agents.map(agentMeta), pipeline: stages });
    return { ...serve(orchestrator, agents), received };
  }

  it("passes each stage's output to the next, answers with the last, and stores the steps", async () => {
    const { chat, session, received } = pipeline(['draft', 'shout', 'sign']);
    const body = await chat({ message: 'a note', sessionId: 'pipeline' });

    expect(received).toEqual([
      ['draft', 'a note'],
      ['shout', 'draft of "a note"'],
      ['sign', 'DRAFT OF "A NOTE"'],
    ]);
    expect(body).toMatchObject({ status: 'completed', reply: 'DRAFT OF "A NOTE" -- signed' });
    expect(body.steps).toMatchObject([
      { kind: 'call', calls: [{ agent: 'draft', message: 'a note' }], annotations: { stage: 1, stages: 3 } },
      { kind: 'call', calls: [{ agent: 'shout', message: 'draft of "a note"' }] },
      { kind: 'call', calls: [{ agent: 'sign', message: 'DRAFT OF "A NOTE"' }] },
      { kind: 'answer', calls: [{ agent: 'route_to_user' }] },
    ]);

    const stored = await session('pipeline');
    expect(stored.turns).toHaveLength(1);
    expect(stored.turns[0]).toMatchObject({ turnId: body.turnId, status: 'completed' });
    expect(stored.turns[0]!.steps).toEqual(body.steps);
    expect(stored.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'a note'],
      ['tool', 'draft of "a note"'],
      ['tool', 'DRAFT OF "A NOTE"'],
      ['tool', 'DRAFT OF "A NOTE" -- signed'],
      ['assistant', 'DRAFT OF "A NOTE" -- signed'],
    ]);
  });

  it('streams the stages one after the other, each starting with the output the previous one ended with', async () => {
    const { stream } = pipeline(['draft', 'shout', 'sign']);
    const { events } = await stream({ message: 'a note', sessionId: 'pipeline-sse' });

    const agentEvents = events
      .filter((event) => event.type === 'agent-start' || event.type === 'agent-end')
      .map((event) => `${event.type} ${(event as EventOf<'agent-start'>).agent}`);
    expect(agentEvents).toEqual([
      'agent-start draft',
      'agent-end draft',
      'agent-start shout',
      'agent-end shout',
      'agent-start sign',
      'agent-end sign',
    ]);
    const starts = eventsOf(events, 'agent-start');
    const ends = eventsOf(events, 'agent-end');
    expect(starts[0]?.message).toBe('a note');
    expect(starts.slice(1).map((start) => start.message)).toEqual(
      ends.slice(0, -1).map((end) => end.content),
    );
    expect(eventsOf(events, 'route').map((event) => event.step.annotations)).toEqual([
      { stage: 1, stages: 3 },
      { stage: 2, stages: 3 },
      { stage: 3, stages: 3 },
      undefined,
    ]);
    expect(eventsOf(events, 'message').map((event) => event.content)).toEqual([
      'DRAFT OF "A NOTE" -- signed',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', status: 'completed' });
  });

  it('stops at a failing middle stage: later stages never run, and no answer shows the error', async () => {
    const { chat, stream, session, received } = pipeline(['draft', 'broken', 'sign']);
    const body = await chat({ message: 'a note', sessionId: 'pipeline-broken' });

    expect(received.map(([agent]) => agent)).toEqual(['draft', 'broken']);
    expect(body.status).toBe('completed');
    expect(body.reply).toMatch(/^Sorry, I could not finish this: step 2 of 3 \(the broken agent\)/);
    expect(body.reply).toContain('the steps after it did not run');
    expectNoSecret(JSON.stringify(body));

    const stored = await session('pipeline-broken');
    expectNoSecret(JSON.stringify(stored));
    expect(callsOf(stored.turns[0]!.steps)).toEqual([
      ['call', ['draft']],
      ['call', ['broken']],
      ['answer', ['route_to_user']],
    ]);
    expect(stored.turns[0]!.steps.at(-1)?.annotations).toEqual({ failedStage: 2, stages: 3 });
    expect(
      stored.messages.find((message) => message.role === 'tool' && message.name === 'broken'),
    ).toMatchObject({ status: 'error', metadata: { errorCode: 'agent_error' } });

    // The stream tells the same story, with nothing of the error either.
    const streamed = await stream({ message: 'another note', sessionId: 'pipeline-broken-sse' });
    expectNoSecret(streamed.text);
    expect(eventsOf(streamed.events, 'agent-start').map((event) => event.agent)).toEqual(['draft', 'broken']);
    expect(eventsOf(streamed.events, 'agent-end').map((event) => event.status)).toEqual(['ok', 'error']);
    expect(eventsOf(streamed.events, 'message')[0]?.content).toMatch(/step 2 of 3 \(the broken agent\)/);
    expect(received.map(([agent]) => agent)).toEqual(['draft', 'broken', 'draft', 'broken']);
  });
});

describe('ConsensusOrchestrator over HTTP', () => {
  const QUESTION = 'What is the capital of France?';

  /**
   * Voters that each wait until every voter has started before answering:
   * a voter run after another would wait for one that never starts, and
   * fail at its timeout. Records when each starts and ends.
   */
  function panel(answers: Record<string, string>) {
    const log: string[] = [];
    const names = Object.keys(answers);
    let started = 0;
    let everyoneStarted!: () => void;
    const allStarted = new Promise<void>((resolve) => {
      everyoneStarted = resolve;
    });
    const agents = names.map((name) =>
      defineAgent({
        name,
        description: `voter ${name}`,
        timeoutMs: 2_000,
        run: async () => {
          log.push(`start ${name}`);
          if (++started === names.length) everyoneStarted();
          await allStarted;
          log.push(`end ${name}`);
          return answers[name] as string;
        },
      }),
    );
    return { agents, log };
  }

  /** Every voter started before any ended: their run intervals overlap. */
  function expectOverlap(log: readonly string[], voters: number): void {
    expect(log).toHaveLength(voters * 2);
    expect(log.slice(0, voters).every((entry) => entry.startsWith('start '))).toBe(true);
    expect(log.slice(voters).every((entry) => entry.startsWith('end '))).toBe(true);
  }

  it('asks the voters at once, answers with the majority and records the disagreement', async () => {
    const { agents, log } = panel({ a: 'Paris', b: ' paris. ', c: 'Lyon' });
    const { chat, session } = serve(new ConsensusOrchestrator({ agents: agents.map(agentMeta) }), agents);
    const body = await chat({ message: QUESTION, sessionId: 'panel' });

    expectOverlap(log, 3);
    expect(body).toMatchObject({ status: 'completed', reply: 'Paris' });

    const [fanOut, answer, ...rest] = (await session('panel')).turns[0]!.steps;
    expect(rest).toEqual([]);
    expect(fanOut).toMatchObject({
      kind: 'fan-out',
      calls: [
        { agent: 'a', message: QUESTION },
        { agent: 'b', message: QUESTION },
        { agent: 'c', message: QUESTION },
      ],
      annotations: { expectedBranches: 3 },
    });
    expect(answer?.kind).toBe('answer');
    expect(answer?.annotations).toEqual({
      correlationId: fanOut?.calls[0]?.toolCallId,
      voters: 3,
      failed: [],
      votes: { paris: 2, lyon: 1 },
      agreement: 0.67,
      dissent: [{ agent: 'c', answer: 'lyon' }],
      aggregate: 'majority',
    });
  });

  it('streams every voter starting before any of them ends, then the majority answer', async () => {
    const { agents, log } = panel({ a: 'red', b: 'blue', c: 'blue' });
    const { stream } = serve(new ConsensusOrchestrator({ agents: agents.map(agentMeta) }), agents);
    const { events } = await stream({ message: 'Which colour?', sessionId: 'panel-sse' });

    expectOverlap(log, 3);
    const agentEvents = events.filter((event) => event.type === 'agent-start' || event.type === 'agent-end');
    expect(agentEvents.slice(0, 3).map((event) => event.type)).toEqual([
      'agent-start',
      'agent-start',
      'agent-start',
    ]);
    expect(
      eventsOf(events, 'agent-end')
        .map((event) => event.agent)
        .sort(),
    ).toEqual(['a', 'b', 'c']);
    expect(eventsOf(events, 'route').map((event) => event.step.kind)).toEqual(['fan-out', 'answer']);
    expect(eventsOf(events, 'message').map((event) => event.content)).toEqual(['blue']);
  });

  it('lets a judge model choose, keeping the vote and the judge usage on the stored answer step', async () => {
    const server = await createScriptedModelServer({
      script: [
        {
          content: JSON.stringify({ answer: 'Paris (two of three agree).', reason: 'Lyon is wrong' }),
          usage: { inputTokens: 90, outputTokens: 11 },
        },
      ],
    });
    try {
      const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
      const { agents } = panel({ a: 'Paris', b: 'Lyon', c: 'Paris' });
      const orchestrator = new ConsensusOrchestrator({
        agents: agents.map(agentMeta),
        aggregate: { model: 'judge-model', client },
      });
      const { chat, session } = serve(orchestrator, agents);
      const body = await chat({ message: QUESTION, sessionId: 'judged' });

      expect(body.reply).toBe('Paris (two of three agree).');
      const answer = (await session('judged')).turns[0]!.steps.at(-1);
      expect(answer?.annotations).toMatchObject({
        aggregate: 'judge',
        votes: { paris: 2, lyon: 1 },
        dissent: [{ agent: 'b', answer: 'lyon' }],
      });
      expect(answer?.usage).toEqual({ inputTokens: 90, outputTokens: 11 });
      const prompt = JSON.stringify(server.requests[0]?.body.messages);
      for (const text of [QUESTION, '(a):\\nParis', '(b):\\nLyon', '(c):\\nParis'])
        expect(prompt).toContain(text);
      server.assertDone();
    } finally {
      await server.close();
    }
  });
});

/**
 * Calls its one agent with the user's message and answers with the reply, or
 * with `failed: <the reply>` when the call failed (the runtime's safe
 * description), so what happened deep inside reaches the caller.
 */
class PassOn extends AbstractOrchestrator {
  constructor(name: string, agent: Agent) {
    super({ name, agents: [agentMeta(agent)] });
  }

  protected handleMessage(conversation: Conversation): Decision {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(reply.status === 'ok' ? reply.content : `failed: ${reply.content}`);
    return toolCall(this.agents[0]!.name, currentUserMessage(conversation).content);
  }
}

describe('nested orchestrators over HTTP', () => {
  /**
   * The outer pipeline `team` → `editor`, where `team` is an orchestrator
   * agent running its own pipeline `research` → `write`.
   */
  function newsroom() {
    const ran: string[] = [];
    const agent = (name: string, transform: (text: string) => string) =>
      defineAgent({
        name,
        description: `The ${name} agent`,
        run: (message) => {
          ran.push(name);
          return transform(message);
        },
      });
    const research = agent('research', (task) => `facts about ${task}`);
    const write = agent('write', (facts) => `article from ${facts}`);
    const team = orchestratorAgent({
      name: 'team',
      description: 'Researches and writes',
      orchestrator: new SequentialOrchestrator({ name: 'desk', agents: [research, write].map(agentMeta) }),
      agents: [research, write],
    });
    const editor = agent('editor', (text) => `${text} (edited)`);
    const outer = new SequentialOrchestrator({ name: 'front', agents: [team, editor].map(agentMeta) });
    return { ...serve(outer, [team, editor]), ran };
  }

  it("stores the inner pipeline's steps under the outer call of the orchestrator agent", async () => {
    const { chat, session, ran } = newsroom();
    const body = await chat({ message: 'tides', sessionId: 'nested' });

    expect(body).toMatchObject({ status: 'completed', reply: 'article from facts about tides (edited)' });
    expect(ran).toEqual(['research', 'write', 'editor']);

    const stored = await session('nested');
    const steps = stored.turns[0]!.steps;
    // The turn's own steps are the outer decisions only.
    expect(callsOf(steps)).toEqual([
      ['call', ['team']],
      ['call', ['editor']],
      ['answer', ['route_to_user']],
    ]);
    // The inner steps are kept on the stored reply of the outer call (the tool message with its toolCallId).
    const teamCall = steps[0]!.calls[0]!;
    const reply = stored.messages.find(
      (message) => message.role === 'tool' && message.toolCallId === teamCall.toolCallId,
    );
    expect(reply).toMatchObject({
      name: 'team',
      status: 'ok',
      content: 'article from facts about tides',
      metadata: { orchestrator: 'desk', depth: 1 },
    });
    const innerSteps = innerStepsOf(reply);
    expect(innerSteps).toMatchObject([
      {
        hop: 0,
        kind: 'call',
        calls: [{ agent: 'research', message: 'tides', status: 'ok' }],
        annotations: { stage: 1, stages: 2 },
      },
      {
        hop: 1,
        kind: 'call',
        calls: [{ agent: 'write', message: 'facts about tides', status: 'ok' }],
        annotations: { stage: 2, stages: 2 },
      },
      { hop: 2, kind: 'answer', calls: [{ agent: 'route_to_user' }] },
    ]);
    // Only the outer agents' replies are session messages.
    expect(
      stored.messages.map((message) => [message.role, message.role === 'tool' ? message.name : '']),
    ).toEqual([
      ['user', ''],
      ['tool', 'team'],
      ['tool', 'editor'],
      ['assistant', ''],
    ]);
  });

  it("streams the inner agents' events under the outer call, and the outer ones as they are", async () => {
    const { stream, ran } = newsroom();
    const { events } = await stream({ message: 'tides', sessionId: 'nested-sse' });

    expect(ran).toEqual(['research', 'write', 'editor']);
    const starts = eventsOf(events, 'agent-start');
    const teamCall = starts[0]?.toolCallId;
    expect(starts.map((event) => [event.agent, event.parentToolCallId])).toEqual([
      ['team', undefined],
      ['research', teamCall],
      ['write', teamCall],
      ['editor', undefined],
    ]);
    expect(
      eventsOf(events, 'agent-end')
        .filter((event) => event.parentToolCallId === undefined)
        .map((event) => [event.agent, event.status, event.content]),
    ).toEqual([
      ['team', 'ok', 'article from facts about tides'],
      ['editor', 'ok', 'article from facts about tides (edited)'],
    ]);
    expect(eventsOf(events, 'route').map((event) => event.step.calls.map((call) => call.agent))).toEqual([
      ['team'],
      ['editor'],
      ['route_to_user'],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', status: 'completed' });
  });

  /** `levels` orchestrator agents, each calling the next, the deepest calling `echo`; the outer pipeline calls `level1`. */
  function tower(levels: number) {
    const ran: string[] = [];
    let inner: Agent = defineAgent({
      name: 'echo',
      description: 'Repeats the message',
      run: (message) => {
        ran.push('echo');
        return `echo: ${message}`;
      },
    });
    for (let level = levels; level >= 1; level--) {
      inner = orchestratorAgent({
        name: `level${level}`,
        description: `Nesting level ${level}`,
        orchestrator: new PassOn(`router${level}`, inner),
        agents: [inner],
      });
    }
    const outer = new SequentialOrchestrator({ name: 'front', agents: [agentMeta(inner)] });
    return { ...serve(outer, [inner]), ran };
  }

  it('runs three levels of nesting (the default maxDepth), keeping each level under the one above', async () => {
    const { chat, session, ran } = tower(3);
    const body = await chat({ message: 'hi', sessionId: 'three-levels' });
    expect(body).toMatchObject({ status: 'completed', reply: 'echo: hi' });
    expect(ran).toEqual(['echo']);

    const stored = await session('three-levels');
    const level1 = stored.messages.find((message) => message.role === 'tool');
    const level2 = innerStepsOf(level1)[0]!.calls[0]!;
    const level3 = level2.innerSteps![0]!.calls[0]!;
    expect(level2).toMatchObject({ agent: 'level2', status: 'ok' });
    expect(level3).toMatchObject({ agent: 'level3', status: 'ok' });
    expect(level3.innerSteps![0]!.calls[0]).toMatchObject({ agent: 'echo', status: 'ok' });
  });

  it('fails the call that would nest past the default maxDepth of 3 with a clear error, running nothing below it', async () => {
    const { chat, session, ran } = tower(4);
    const body = await chat({ message: 'hi', sessionId: 'four-levels' });

    expect(body.status).toBe('completed');
    expect(body.reply).toBe("failed: Agent 'level4' failed (nesting_depth_exceeded)");
    expect(ran).toEqual([]);

    const stored = await session('four-levels');
    const level1 = stored.messages.find((message) => message.role === 'tool');
    const level2 = innerStepsOf(level1)[0]!.calls[0]!;
    const level3 = level2.innerSteps![0]!.calls[0]!;
    const level4 = level3.innerSteps![0]!.calls[0]!;
    expect(level4).toMatchObject({ agent: 'level4', status: 'error' });
    expect(level4.innerSteps).toBeUndefined();
  });
});
