import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptEntry,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import { findTopic, TOPICS } from './desk.js';

interface PlannedStep {
  id: string;
  agent: string;
  goal: string;
  dependsOn: string[];
}

/** The plan for a briefing: research and facts at once, the outline after the research, the text after both. */
function briefingPlan(topic: string): PlannedStep[] {
  return [
    { id: 'research', agent: 'researcher', goal: `Gather background notes on ${topic}`, dependsOn: [] },
    { id: 'facts', agent: 'factbook', goal: `Look up key figures about ${topic}`, dependsOn: [] },
    {
      id: 'outline',
      agent: 'outliner',
      goal: `Outline a short briefing on ${topic} from the notes`,
      dependsOn: ['research'],
    },
    {
      id: 'write',
      agent: 'writer',
      goal: `Write a short briefing on ${topic} from the outline and the key figures`,
      dependsOn: ['outline', 'facts'],
    },
  ];
}

function textOf(message: RecordedRequest['body']['messages'][number] | undefined): string {
  return typeof message?.content === 'string' ? message.content : '';
}

function reply(value: object): ScriptedReply {
  return { content: JSON.stringify(value) };
}

/** The request's text: the first user message of the turn (the others carry the plan). */
function requestText(request: RecordedRequest): string {
  return textOf(request.body.messages.find((message) => message.role === 'user'));
}

/** How the steps of the plan the prompt shows stand: `done`, `MISSING` (failed), `pending` or `running`. */
function statuses(prompt: string): Map<string, string> {
  const found = prompt.matchAll(/\[Step "([^"]+)" \([^)]*\): [^\]\n]*\] (done|MISSING|pending|running)/g);
  return new Map([...found].map((match) => [match[1]!, match[2]!]));
}

/** The first plan: the four steps, or a question when the topic is unknown. */
function plan(request: RecordedRequest): ScriptedReply {
  const topic = findTopic(requestText(request));
  if (!topic) {
    const known = TOPICS.map((candidate) => candidate.name).join(' or ');
    return reply({ thought: 'no known topic', steps: [], answer: `Which topic? I can brief on ${known}.` });
  }
  return reply({ thought: 'research and facts first', steps: briefingPlan(topic.name), answer: '' });
}

/**
 * A new plan after a failure: the steps that had not run yet, under new ids,
 * without the failed steps (a dependent step is told what it goes without).
 */
function replan(request: RecordedRequest): ScriptedReply {
  const topic = findTopic(requestText(request))?.name ?? 'the topic';
  const status = statuses(textOf(request.body.messages.at(-1)));
  // The plan's number: ids must stay unique in the turn.
  let number = 2;
  while ([...status.keys()].some((id) => id.endsWith(`-${number}`))) number += 1;
  const suffix = `-${number}`;
  const rename = (id: string) => (status.get(id) === 'done' ? id : `${id}${suffix}`);
  const steps = briefingPlan(topic)
    .filter((step) => status.get(step.id) === 'pending')
    .map((step) => {
      const failed = step.dependsOn.filter((id) => status.get(id) === 'MISSING');
      return {
        ...step,
        id: rename(step.id),
        goal: failed.length
          ? `${step.goal} (without the ${failed.join(', ')} step, which failed)`
          : step.goal,
        dependsOn: step.dependsOn.filter((id) => !failed.includes(id)).map(rename),
      };
    });
  return reply({ thought: 'go on without the failed steps', steps, answer: '' });
}

/** The answer: the writer's text, then what could not be done. */
function synthesise(request: RecordedRequest): ScriptedReply {
  const prompt = textOf(request.body.messages.at(-1));
  const written = /\[Step "[^"]+" \(writer\): [^\]\n]*\] done:\n([^\n]*)/.exec(prompt)?.[1];
  const failed = [
    ...prompt.matchAll(/\[Step "[^"]+" \([^)]*\): ([^\]\n]*?)(?:; after [^\]\n]*)?\] MISSING/g),
  ];
  const parts = [written ?? 'Sorry, the briefing could not be written.'];
  if (failed.length > 0) parts.push(`Could not be done: ${failed.map((match) => match[1]).join('; ')}.`);
  return reply({ thought: 'the writer has the briefing', answer: parts.join('\n\n') });
}

/**
 * A stand-in for the planning model, so that the example runs without an
 * API key. It answers by the schema the request asks for: `plan` with the
 * four-step briefing plan, `plan_review` by keeping the plan, `revised_plan`
 * with the steps that had not run (without the failed ones), and
 * `plan_synthesis` with the writer's text and
 * what could not be done. It reads only what the real model would read.
 *
 * @example
 * ```ts
 * const model = await createScriptedModelServer({ script: [briefingModel, briefingModel] });
 * ```
 */
export function briefingModel(request: RecordedRequest): ScriptedReply {
  const format = request.body.response_format;
  const schema = format?.type === 'json_schema' ? format.json_schema.name : undefined;
  if (schema === 'plan_review')
    return reply({ thought: 'the results fit the plan', revise: false, steps: [], answer: '' });
  if (schema === 'revised_plan') return replan(request);
  if (schema === 'plan_synthesis') return synthesise(request);
  return plan(request);
}

/**
 * Starts an OpenAI-compatible server on loopback that answers every request
 * with {@link briefingModel}: an endless script (each entry queues the next).
 */
export async function startOfflineModel(): Promise<ScriptedModelServer> {
  const server = await createScriptedModelServer();
  const endless: ScriptEntry = (request) => {
    server.push(endless);
    return briefingModel(request);
  };
  server.push(endless);
  return server;
}
