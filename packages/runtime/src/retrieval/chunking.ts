import { ConfigurationError } from '@switchboard/core';

/** How documents are split into chunks before they are embedded. */
export interface ChunkingOptions {
  /** The most characters in one chunk. Default 1 000. */
  chunkSize?: number;
  /** Characters a chunk repeats from the end of the one before, so a sentence cut in two is whole in one. Default 100. */
  overlap?: number;
}

/** Checked chunking settings. */
export function chunkingOf(owner: string, { chunkSize = 1000, overlap = 100 }: ChunkingOptions = {}) {
  if (!Number.isInteger(chunkSize) || chunkSize < 50 || chunkSize > 20_000)
    throw new ConfigurationError({ message: `${owner}: chunkSize must be an integer from 50 to 20 000` });
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= chunkSize / 2)
    throw new ConfigurationError({
      message: `${owner}: overlap must be an integer from 0 to less than half of chunkSize`,
    });
  return { chunkSize, overlap };
}

/** Where to end a chunk that starts at `start`: a paragraph, sentence or word break in its last half, else the size. */
function chunkEnd(text: string, start: number, size: number): number {
  const limit = start + size;
  if (limit >= text.length) return text.length;
  const window = text.slice(start, limit);
  for (const separator of ['\n\n', '. ', '\n', ' ']) {
    const at = window.lastIndexOf(separator);
    if (at >= size / 2) return start + at + separator.length;
  }
  return limit;
}

/**
 * Splits `text` into chunks of at most `chunkSize` characters, ending each at
 * a paragraph, sentence or word break where one falls in its second half, and
 * starting each `overlap` characters before the end of the previous one (at a
 * word start). Whitespace-only chunks are dropped.
 *
 * @example
 * ```ts
 * chunkText('First paragraph.\n\nSecond paragraph.', { chunkSize: 20, overlap: 0 });
 * // ['First paragraph.', 'Second paragraph.']
 * ```
 */
export function chunkText(text: string, { chunkSize = 1000, overlap = 100 }: ChunkingOptions = {}): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = chunkEnd(text, start, chunkSize);
    const chunk = text.slice(start, end).trim();
    if (chunk) chunks.push(chunk);
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    // Start the overlap at a word, not inside one.
    const space = text.indexOf(' ', next);
    if (overlap > 0 && space !== -1 && space < end) next = space + 1;
    start = next;
  }
  return chunks;
}
