import { flatString } from '../stores/freeze.js';

/** Texts longer than this are kept as they are: they are rarely repeated word for word. */
const MAX_POOLED_LENGTH = 256;
/** Distinct texts kept; when full the pool starts over, so it never holds more than this. */
const MAX_POOLED_TEXTS = 1024;

/**
 * Shares repeated short texts. Routing steps are stored with their session,
 * and an orchestrator's `thought` and `reason` are mostly the same few texts
 * built afresh on every turn ("answered by echo"): pooled, each turn keeps a
 * reference to one shared string instead of a copy of its own, which is less
 * memory and, above all, less for the garbage collector to copy and mark.
 */
export class TextPool {
  readonly #texts = new Map<string, string>();

  /** The pooled string equal to `text` (flat), adding `text` when it is new. */
  share(text: string): string {
    if (text.length > MAX_POOLED_LENGTH) return flatString(text);
    const pooled = this.#texts.get(text);
    if (pooled !== undefined) return pooled;
    if (this.#texts.size >= MAX_POOLED_TEXTS) this.#texts.clear();
    const flat = flatString(text);
    this.#texts.set(flat, flat);
    return flat;
  }
}
