import { ROUTE_TO_USER, ValidationError } from '@switchboard/core';
import type { RouteStep } from '../turns/turn-record.js';

/** The longest trace name a request may ask for (`metadata.traceName`). */
export const MAX_TRACE_NAME_LENGTH = 200;
/** The most tags a request may add (`metadata.tags`). */
export const MAX_REQUEST_TAGS = 10;
/** The longest tag a request may add. */
export const MAX_TAG_LENGTH = 64;

/** What a request asked its trace to be called and tagged with. */
export interface RequestTraceLabels {
  name?: string;
  tags?: readonly string[];
}

/**
 * Names and tags a turn's trace (Langfuse's trace name and tags): the name
 * is the app and the entry point (`support /v1/chat`), unless the request
 * sets `metadata.traceName`; the tags are `app:<name>`,
 * `orchestrator:<name>`, `agent:<name>` for each agent the turn called, the
 * app's own tags and the request's `metadata.tags`.
 */
export class TraceNaming {
  readonly #app: string;
  readonly #baseTags: readonly string[];
  readonly #names = new Map<string, string>();

  constructor(app: string, orchestrator: string, appTags: readonly string[] = []) {
    this.#app = app;
    this.#baseTags = [...new Set([`app:${app}`, `orchestrator:${orchestrator}`, ...appTags])];
  }

  /** The default name of a trace that starts at `entry` (built once per entry point). */
  nameFor(entry: string): string {
    let name = this.#names.get(entry);
    if (name === undefined) {
      name = `${this.#app} ${entry}`;
      if (this.#names.size < 64) this.#names.set(entry, name);
    }
    return name;
  }

  /**
   * The trace labels a request's metadata asks for: `traceName` (a string of
   * at most {@link MAX_TRACE_NAME_LENGTH} characters) and `tags` (an array
   * of strings, or one comma-separated string as OpenAI clients' string-only
   * metadata allows; at most {@link MAX_REQUEST_TAGS}, each at most
   * {@link MAX_TAG_LENGTH} characters). Throws `ValidationError` otherwise.
   */
  static fromMetadata(metadata: Record<string, unknown> | undefined): RequestTraceLabels | undefined {
    if (metadata === undefined) return undefined;
    const { traceName, tags } = metadata;
    if (traceName === undefined && tags === undefined) return undefined;
    const labels: RequestTraceLabels = {};
    if (traceName !== undefined) {
      if (
        typeof traceName !== 'string' ||
        traceName.trim() === '' ||
        traceName.length > MAX_TRACE_NAME_LENGTH
      )
        throw new ValidationError({
          message: `metadata.traceName must be a non-empty string of at most ${MAX_TRACE_NAME_LENGTH} characters`,
        });
      labels.name = traceName.trim();
    }
    if (tags !== undefined) {
      const list = typeof tags === 'string' ? tags.split(',').map((tag) => tag.trim()) : tags;
      if (
        !Array.isArray(list) ||
        list.length > MAX_REQUEST_TAGS ||
        !list.every((tag) => typeof tag === 'string' && tag !== '' && tag.length <= MAX_TAG_LENGTH)
      )
        throw new ValidationError({
          message: `metadata.tags must be at most ${MAX_REQUEST_TAGS} non-empty strings of at most ${MAX_TAG_LENGTH} characters (an array, or one comma-separated string)`,
        });
      labels.tags = list as string[];
    }
    return labels;
  }

  /** The tags of a trace whose part made `steps`, with the request's own. */
  tagsFor(steps: readonly RouteStep[], requestTags: readonly string[] | undefined): string[] {
    const tags = this.#baseTags.slice();
    for (const step of steps) {
      for (const call of step.calls) {
        if (call.agent === ROUTE_TO_USER) continue;
        const tag = `agent:${call.agent}`;
        if (!tags.includes(tag)) tags.push(tag);
      }
    }
    if (requestTags) for (const tag of requestTags) if (!tags.includes(tag)) tags.push(tag);
    return tags;
  }
}
