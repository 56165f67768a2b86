/**
 * Remembers what was built for a set of candidate names (a JSON schema, a
 * validator, a prompt), so a decision over the same candidates allocates
 * nothing new. Looks up by list identity first (the runtime passes the same
 * agents array while nothing narrows it), then by the names.
 *
 * @example
 * ```ts
 * const schemas = new CandidateCache((names) => ({ enum: [...names] }));
 * const schema = schemas.get(conversation.agents, (agent) => agent.name);
 * ```
 */
export class CandidateCache<Entry> {
  readonly #byList = new WeakMap<object, Entry>();
  readonly #byNames = new Map<string, Entry>();
  readonly #build: (names: readonly string[]) => Entry;
  readonly #limit: number;

  /** `limit` bounds how many distinct candidate sets are kept (oldest dropped first). */
  constructor(build: (names: readonly string[]) => Entry, limit = 64) {
    this.#build = build;
    this.#limit = limit;
  }

  /** The entry for the candidates in `list`, named by `nameOf`, built on first use. */
  get<Item>(list: readonly Item[], nameOf: (item: Item) => string): Entry {
    const known = this.#byList.get(list);
    if (known !== undefined) return known;
    const names = list.map(nameOf);
    const key = names.join('\u0000');
    let entry = this.#byNames.get(key);
    if (entry === undefined) {
      entry = this.#build(names);
      if (this.#byNames.size >= this.#limit) {
        const oldest = this.#byNames.keys().next();
        if (!oldest.done) this.#byNames.delete(oldest.value);
      }
      this.#byNames.set(key, entry);
    }
    this.#byList.set(list, entry);
    return entry;
  }
}
