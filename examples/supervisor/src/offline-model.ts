import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptEntry,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import { CITIES, findCity } from './travel-services.js';

/** The sub-goal each agent gets for a city, and the words of a request that ask for it. */
const SUB_GOALS = [
  { agent: 'flights', asked: /\b(flights?|fly|plane)\b/i, task: (city: string) => `Find flights to ${city}` },
  {
    agent: 'hotels',
    asked: /\b(hotels?|stay|sleep|room)\b/i,
    task: (city: string) => `Find a hotel in ${city} for the weekend`,
  },
  {
    agent: 'weather',
    asked: /\b(weather|forecast|rain|sun)\b/i,
    task: (city: string) => `Give the weekend weather forecast for ${city}`,
  },
];

function textOf(message: RecordedRequest['body']['messages'][number] | undefined): string {
  return typeof message?.content === 'string' ? message.content : '';
}

function answer(subgoals: { agent: string; task: string }[], text: string, thought: string): ScriptedReply {
  return { content: JSON.stringify({ thought, subgoals, answer: text }) };
}

/** The decomposition: one sub-goal per agent the request asks for (all three when it names none). */
function decompose(request: RecordedRequest): ScriptedReply {
  const message = textOf(request.body.messages.findLast((item) => item.role === 'user'));
  const city = findCity(message);
  if (!city) {
    const known = CITIES.map((candidate) => candidate.name).join(', ');
    return answer([], `Which city shall I plan your weekend in? I know ${known}.`, 'no known city');
  }
  // Only agents the request's schema offers: the supervisor passes the candidates as an enum.
  const offered = JSON.stringify(request.body.response_format);
  const candidates = SUB_GOALS.filter((goal) => offered.includes(`"${goal.agent}"`));
  const asked = candidates.filter((goal) => goal.asked.test(message));
  const chosen = asked.length > 0 ? asked : candidates;
  return answer(
    chosen.map((goal) => ({ agent: goal.agent, task: goal.task(city.name) })),
    '',
    `${chosen.length} independent parts for ${city.name}`,
  );
}

/** The synthesis: the agents' replies in order, then what is missing, as the prompt marks it. */
function synthesise(results: string): ScriptedReply {
  const replies = [...results.matchAll(/\[Agent "[^"]+" replied\]\n([^[]*)/g)].map((match) =>
    match[1]!.trim(),
  );
  const missing = [...results.matchAll(/\[MISSING: agent "([^"]+)"/g)].map((match) => match[1]!);
  const parts = [...replies];
  if (missing.length > 0) {
    parts.push(
      `Missing: I could not get the ${missing.join(' and ')} part${missing.length > 1 ? 's' : ''} right now; please ask again later.`,
    );
  }
  return answer([], parts.join('\n'), `synthesised ${replies.length} results, ${missing.length} missing`);
}

/**
 * A stand-in for the supervising model, so that the example runs without an
 * API key: it answers the decomposition with one sub-goal per agent the
 * request asks for, and the synthesis with the agents' replies and what the
 * prompt marks `MISSING`. It reads only what the real model would read.
 *
 * @example
 * ```ts
 * const model = await createScriptedModelServer({ script: [travelDeskModel, travelDeskModel] });
 * ```
 */
export function travelDeskModel(request: RecordedRequest): ScriptedReply {
  const last = textOf(request.body.messages.at(-1));
  return /^Round \d+ results:/.test(last) ? synthesise(last) : decompose(request);
}

/**
 * Starts an OpenAI-compatible server on loopback that answers every request
 * with {@link travelDeskModel}: an endless script (each entry queues the next).
 */
export async function startOfflineModel(): Promise<ScriptedModelServer> {
  const server = await createScriptedModelServer();
  const endless: ScriptEntry = (request) => {
    server.push(endless);
    return travelDeskModel(request);
  };
  server.push(endless);
  return server;
}
