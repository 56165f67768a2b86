/**
 * The plain-text notes the desk's agents pass on: the `research` agent's
 * numbered sources, the `reflect` agent's gaps, and the tasks the router
 * writes from them. Plain text, because that is what an agent's task and
 * reply are, and what the guardrails check.
 * @module
 */

/** A source as the research notes number it. */
export interface NumberedSource {
  /** Its number in the notes: the answer cites it as `[n]`. */
  n: number;
  title: string;
  url: string;
  text: string;
}

const SOURCE_LINE = /^\[(\d+)\] (.+?) \((\S+)\): (.*)$/;
const NO_SOURCES = 'Sources: none in the library.';

/** The research notes: `Sources:` and one line `[n] Title (url): text` per source. */
export function formatSources(sources: readonly Omit<NumberedSource, 'n'>[]): string {
  if (sources.length === 0) return NO_SOURCES;
  const lines = sources.map(
    (source, index) => `[${index + 1}] ${source.title} (${source.url}): ${source.text}`,
  );
  return ['Sources:', ...lines].join('\n');
}

/** The sources of research notes (or of a task that quotes them), in their order. */
export function parseSources(notes: string): NumberedSource[] {
  return notes.split('\n').flatMap((line) => {
    const match = SOURCE_LINE.exec(line);
    return match ? [{ n: Number(match[1]), title: match[2]!, url: match[3]!, text: match[4]! }] : [];
  });
}

/** The line that follows `heading` (`Question:`) in a task, or the empty string. */
export function field(task: string, heading: string): string {
  const line = task.split('\n').find((candidate) => candidate.startsWith(`${heading}: `));
  return line?.slice(heading.length + 2) ?? '';
}

/** The `- ` items under `heading` (`Gaps:`) in a task, up to the next blank line. */
export function items(task: string, heading: string): string[] {
  const lines = task.split('\n');
  const start = lines.indexOf(`${heading}:`);
  if (start < 0) return [];
  const end = lines.indexOf('', start);
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2));
}

/** The gaps notes of the `reflect` agent: `Gaps:` and one `- ` line each, or `Gaps: none.` */
export function formatGaps(gaps: readonly string[]): string {
  return gaps.length === 0 ? 'Gaps: none.' : ['Gaps:', ...gaps.map((gap) => `- ${gap}`)].join('\n');
}
