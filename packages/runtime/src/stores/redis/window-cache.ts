import type { MessageItem } from '@switchboard/core';
import { decodeMessage } from './records.js';

/** Separates the records of a window read as one text (see `APPEND_SESSION`). */
const RECORD_SEPARATOR = '\n';
const SEPARATOR_CODE = RECORD_SEPARATOR.charCodeAt(0);

interface CachedWindow {
  /** The window's records, joined by the separator, exactly as Redis returned them. */
  text: string;
  /** Where each record starts in `text`. */
  starts: number[];
  /** The decoded (frozen) records. */
  messages: MessageItem[];
}

/** Where each record starts in a separator-joined text. */
function recordStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf(RECORD_SEPARATOR); at !== -1; at = text.indexOf(RECORD_SEPARATOR, at + 1)) {
    starts.push(at + 1);
  }
  return starts;
}

/**
 * The first record of `previous` from which every record up to its end is,
 * character for character, also the start of `text`; -1 when there is none.
 */
function overlapStart(previous: CachedWindow, text: string): number {
  for (let index = 0; index < previous.starts.length; index += 1) {
    const start = previous.starts[index] as number;
    const length = previous.text.length - start;
    if (length > text.length) continue;
    // The shared records must end where a record of `text` ends.
    if (length < text.length && text.charCodeAt(length) !== SEPARATOR_CODE) continue;
    // Comparing two slices compares memory; `startsWith` walks the text many times slower.
    if (text.slice(0, length) === previous.text.slice(start)) return index;
  }
  return -1;
}

/**
 * @internal The last window each session read, so that the next read of the
 * same session decodes only the records that are new to it. Each turn reads
 * the last 50 or so messages again, of which only the few appended since the
 * last turn have not been parsed and validated before.
 *
 * A record is reused only when its text is identical to what was decoded
 * before, at the same place relative to the records around it, so nothing can
 * be served stale: a record rewritten, a session deleted and written again,
 * or an append by another replica all change the text (or leave it, and
 * then the decoded value, the same). Memory stays under `maxChars` characters
 * of record text (with the decoded messages on top), evicting the windows
 * read least recently.
 */
export class SessionWindowCache {
  readonly #windows = new Map<string, CachedWindow>();
  readonly #maxChars: number;
  #chars = 0;

  /** @param maxChars - how many characters of record text to keep, over all sessions (default 8 000 000). */
  constructor({ maxChars = 8_000_000 }: { maxChars?: number } = {}) {
    this.#maxChars = maxChars;
  }

  /**
   * Decodes a window that Redis returned as separator-joined records (none
   * containing the separator), reusing the messages decoded from the same
   * records of the key's previous window.
   * @throws CorruptRecordError naming the key and the failing item's position.
   */
  decode(key: string, text: string): MessageItem[] {
    const starts = recordStarts(text);
    const count = starts.length;
    const messages = new Array<MessageItem>(count);
    let reused = 0;
    const previous = this.#windows.get(key);
    if (previous) {
      const from = overlapStart(previous, text);
      if (from !== -1) {
        for (let index = from; index < previous.messages.length; index += 1) {
          messages[reused] = previous.messages[index] as MessageItem;
          reused += 1;
        }
      }
    }
    for (let index = reused; index < count; index += 1) {
      const end = index + 1 < count ? (starts[index + 1] as number) - 1 : text.length;
      messages[index] = decodeMessage(key, text.slice(starts[index], end), index, count);
    }
    this.#remember(key, { text, starts, messages });
    // The caller gets its own array: the cached one must not grow or shrink.
    return messages.slice();
  }

  /** Drops the key's window (its session was deleted, or a read came back in another form). */
  forget(key: string): void {
    const window = this.#windows.get(key);
    if (!window) return;
    this.#windows.delete(key);
    this.#chars -= window.text.length;
  }

  #remember(key: string, window: CachedWindow): void {
    this.forget(key);
    if (window.text.length > this.#maxChars) return;
    // A Map iterates in insertion order, so re-inserting makes the first entry the least recently read.
    this.#windows.set(key, window);
    this.#chars += window.text.length;
    for (const [oldest, { text }] of this.#windows) {
      if (this.#chars <= this.#maxChars) break;
      this.#windows.delete(oldest);
      this.#chars -= text.length;
    }
  }
}
