import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import { CONCISE_INSTRUCTIONS, THOROUGH_INSTRUCTIONS } from './app.js';

function textOf(message: RecordedRequest['body']['messages'][number] | undefined): string {
  return typeof message?.content === 'string' ? message.content : '';
}

/** The numbered sources of a writer's task: `[n] source (score s): text`. */
function sourcesOf(task: string): Array<{ number: number; text: string }> {
  return [...task.matchAll(/^\[(\d+)\] \S+ \(score [\d.]+\): (.*)$/gm)].map((match) => ({
    number: Number(match[1]),
    text: match[2] as string,
  }));
}

const firstSentence = (text: string) => /^.*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text;

/** A perception snapshot made from the request's words. */
function perceive(request: string): string {
  const topics = [
    ...request.matchAll(/\b(pumped hydro|batter(?:y|ies)|hydrogen|compressed air|flywheels?|thermal)\b/gi),
  ];
  return JSON.stringify({
    entities: topics.map((match) => ({ name: match[0].toLowerCase(), type: 'storage technology' })),
    intent: /\bcompare|versus|\bvs\b/i.test(request)
      ? 'compare storage technologies'
      : 'learn how storage works',
    constraints: [],
    subGoals: request
      .split(/\band\b|\?/)
      .map((part) => part.trim())
      .filter(Boolean)
      .slice(0, 10),
    confidence: topics.length > 0 ? 0.9 : 0.3,
  });
}

/** Scores each candidate by the share of its sentences that cite a source; the best wins. */
function judge(prompt: string): string {
  const candidates = [
    ...prompt.matchAll(/^Candidate (\d+) \(([^)]+)\):\n([\s\S]*?)(?=\n\nCandidate \d+ \(|$(?![\s\S]))/gm),
  ];
  const scores = candidates.map((match) => {
    const sentences = (match[3] as string).split(/(?<=[.!?])\s+/).filter(Boolean);
    const cited = sentences.filter((sentence) => /\[\d+\]/.test(sentence)).length;
    const score =
      sentences.length === 0 ? 0 : Math.round((0.4 + (0.6 * cited) / sentences.length) * 100) / 100;
    return {
      candidate: Number(match[1]),
      score,
      reason: cited ? `cites ${cited} source(s)` : 'cites no source',
    };
  });
  const best = scores.reduce(
    (top, next) => (next.score > top.score ? next : top),
    scores[0] ?? { candidate: 1, score: 0 },
  );
  return JSON.stringify({ scores, best: best.candidate, reason: 'it cites its sources for every fact' });
}

/** Passes an answer that cites its sources, or a refusal when every agent failed; flags any other. */
function review(prompt: string): string {
  const answer = prompt.split('The answer to review:\n')[1] ?? '';
  const cited = /\[\d+\]/.test(answer);
  const refusal = !/\] replied\]/.test(prompt);
  return JSON.stringify({
    score: cited ? 0.9 : refusal ? 0.8 : 0.5,
    issues: cited ? [] : ['the answer cites no source'],
    rewrite: '',
    escalate: false,
    hallucinationRisk: cited ? 0.1 : 0.5,
  });
}

/**
 * A stand-in for the model, so that the example runs without an API key:
 * perception reads the storage technologies the request names; the concise
 * writer gives the first source's first sentence, the thorough one a
 * sentence of each source with its number; the judge prefers cited
 * sentences; the critic passes an answer that cites its sources (or a
 * refusal when no agent replied).
 */
export function researchDeskModel(request: RecordedRequest): ScriptedReply {
  const { messages, response_format: format } = request.body;
  const system = textOf(messages[0]);
  const prompt = textOf(messages.findLast((message) => message.role === 'user'));
  const schema = format?.type === 'json_schema' ? format.json_schema.name : undefined;
  if (schema === 'perception') return { content: perceive(prompt) };
  if (schema === 'best_of_verdict') return { content: judge(prompt) };
  if (schema === 'critic_verdict') return { content: review(prompt) };
  const sources = sourcesOf(prompt);
  if (sources.length === 0) return { content: 'The sources found say nothing about this.' };
  if (system === CONCISE_INSTRUCTIONS) return { content: firstSentence(sources[0]?.text ?? '') };
  if (system === THOROUGH_INSTRUCTIONS)
    return {
      content: sources
        .map(({ number, text }) => `${firstSentence(text).replace(/\.$/, '')} [${number}].`)
        .join(' '),
    };
  return { content: 'I only know the research desk’s prompts.' };
}

/** Starts an OpenAI-compatible server on loopback that answers every request with {@link researchDeskModel}. */
export function startOfflineModel(): Promise<ScriptedModelServer> {
  return createScriptedModelServer({ fallback: researchDeskModel });
}
