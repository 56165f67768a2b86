import { type Agent, defineAgent } from '@switchboard/runtime';
import { mentions, type SimulatedSearch, topicWords } from './library.js';
import { field, formatGaps, formatSources, items, type NumberedSource, parseSources } from './notes.js';

/** The first sentence of a text. */
function firstSentence(text: string): string {
  return text.split(/(?<=\.)\s/)[0] ?? text;
}

/** What the `reflect` agent finds missing: question words no source mentions, too few sources. */
export function gapsOf(question: string, sources: readonly NumberedSource[]): string[] {
  if (sources.length === 0) return ['the library has nothing on this question'];
  const gaps: string[] = [];
  const covered = sources.map((source) => `${source.title} ${source.text}`).join(' ');
  const missing = topicWords(question).filter((word) => !mentions(covered, word));
  if (missing.length > 0) gaps.push(`no source mentions ${missing.join(', ')}`);
  if (sources.length === 1) gaps.push('only one source: nothing to cross-check it against');
  return gaps;
}

/**
 * The answer written from a task: a sentence from each source, what the
 * sources leave open, and, when the task's instructions ask to cite, `[n]`
 * after each sentence and the list of sources.
 */
export function writeAnswer(task: string): string {
  const sources = parseSources(task);
  if (sources.length === 0)
    return 'I found nothing in the library about this, so I cannot answer it from sources.';
  const cite = /\bcit(?:e|ing)\b/i.test(field(task, 'Instructions'));
  const sentences = sources.map((source) => {
    const sentence = firstSentence(source.text);
    return cite ? `${sentence.replace(/\.$/, '')} [${source.n}].` : sentence;
  });
  const gaps = items(task, 'Gaps');
  if (gaps.length > 0) sentences.push(`What the sources leave open: ${gaps.join('; ')}.`);
  const answer = sentences.join(' ');
  if (!cite) return answer;
  const list = sources.map((source) => `[${source.n}] ${source.title}, ${source.url}`);
  return [answer, '', 'Sources:', ...list].join('\n');
}

/**
 * The desk's three agents, plain functions so that the example runs
 * offline:
 * - `research` searches the library (through `search`, which may be busy:
 *   its error is retryable) and replies with numbered sources;
 * - `reflect` reads the question and the sources and lists the gaps;
 * - `answer` writes the answer from the question, the sources and the gaps.
 */
export function researchAgents(search: SimulatedSearch): Agent[] {
  return [
    defineAgent({
      name: 'research',
      description: 'Searches the library for sources on a question; replies with numbered sources',
      async run(question, { signal }) {
        const sources = await search.search(question, { signal });
        return formatSources(sources);
      },
    }),
    defineAgent({
      name: 'reflect',
      description: 'Reads a question and its sources and lists what the sources leave open',
      run(task) {
        return formatGaps(gapsOf(field(task, 'Question'), parseSources(task)));
      },
    }),
    defineAgent({
      name: 'answer',
      description: 'Writes the answer to a question from its sources and gaps',
      run: writeAnswer,
    }),
  ];
}
