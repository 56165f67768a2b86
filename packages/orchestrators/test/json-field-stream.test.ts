import { describe, expect, it } from 'vitest';
import { JsonFieldStream } from '../src/json-field-stream.js';

/** Feeds `json` in pieces of `size` characters and returns what the field gave, piece by piece. */
function feed(stream: JsonFieldStream, json: string, size: number): string[] {
  const out: string[] = [];
  for (let index = 0; index < json.length; index += size)
    out.push(stream.push(json.slice(index, index + size)));
  return out;
}

describe('JsonFieldStream: one string field of a JSON reply, decoded as it is written', () => {
  const value = ' Fly on Friday: "Roma" ✈️ €120,\n\tthen the {hotel} \\ done. ';
  const reply = JSON.stringify({
    thought: 'the "answer": is below',
    subgoals: [{ agent: 'a', task: 'answer' }],
    answer: value,
  });

  it('gives the trimmed value whatever the piece size, escapes and surrogate pairs included', () => {
    for (const size of [1, 2, 3, 7, 64, reply.length]) {
      const pieces = feed(new JsonFieldStream('answer'), reply, size);
      expect(pieces.join(''), `pieces of ${size}`).toBe(value.trim());
      // Nothing comes before the field: keys and strings named "answer" elsewhere are not it.
      expect(pieces.slice(0, Math.floor(reply.indexOf('"answer":"') / size)).join('')).toBe('');
    }
  });

  it('gives the text as it arrives, not at the end', () => {
    const pieces = feed(new JsonFieldStream('answer'), reply, 5).filter((piece) => piece !== '');
    expect(pieces.length).toBeGreaterThan(5);
  });

  it('gives nothing when the fields before it say no', () => {
    const when = (before: Record<string, unknown>) => (before.subgoals as unknown[]).length === 0;
    expect(feed(new JsonFieldStream('answer', when), reply, 4).join('')).toBe('');
    const final = JSON.stringify({ thought: 't', subgoals: [], answer: 'Done.' });
    expect(feed(new JsonFieldStream('answer', when), final, 4).join('')).toBe('Done.');
  });

  it('reads escaped unicode, split anywhere', () => {
    const json = '{"answer":"caf\\u00e9 \\ud83d\\ude80 ok"}';
    for (const size of [1, 2, 5])
      expect(feed(new JsonFieldStream('answer'), json, size).join('')).toBe('café 🚀 ok');
  });
});
