/**
 * @internal The fields of compact records, shared by records and packed
 * sessions: trailing nulls dropped, the rarer fields in a rest object, ids
 * packed against the record's first id, and the built-in orchestrators'
 * phrases by number.
 *
 * @module
 */

/** Drops trailing nulls, so that absent optional fields cost nothing. */
export function trimmed(values: unknown[]): unknown[] {
  let end = values.length;
  while (end > 0 && (values[end - 1] === null || values[end - 1] === undefined)) end -= 1;
  values.length = end;
  return values;
}

/** `rest` when it has a key, otherwise null. */
export function restOf(rest: Record<string, unknown>): Record<string, unknown> | null {
  for (const key in rest) if (rest[key] !== undefined) return rest;
  return null;
}

/** `value` when it is a text (not empty, with `empty: false`); a TypeError naming `what` otherwise. */
export function text(value: unknown, what: string, { empty = true } = {}): string {
  if (typeof value !== 'string' || (!empty && value === '')) throw new TypeError(`${what} must be a text`);
  return value;
}

/**
 * An id that shares its digits after the `_` with `ref` (ids made in one
 * process share a tag: `call_<tag>4` beside `turn_<tag>3`) as `[prefix,
 * shared digits, rest]`; any other id as it is.
 */
export function packId(id: string, ref: string): string | [string, number, string] {
  const cut = id.indexOf('_');
  const refCut = ref.indexOf('_');
  if (cut <= 0 || refCut <= 0) return id;
  const most = Math.min(id.length - cut - 1, ref.length - refCut - 1);
  let shared = 0;
  while (shared < most && id.charCodeAt(cut + 1 + shared) === ref.charCodeAt(refCut + 1 + shared))
    shared += 1;
  return shared >= 8 ? [id.slice(0, cut), shared, id.slice(cut + 1 + shared)] : id;
}

/** The id that {@link packId} packed against `ref`. */
export function unpackId(value: unknown, ref: string, what: string): string {
  if (typeof value === 'string' && value !== '') return value;
  if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'number') {
    const refCut = ref.indexOf('_');
    return `${value[0]}_${ref.slice(refCut + 1, refCut + 1 + value[1])}${text(value[2], what)}`;
  }
  throw new TypeError(`${what} must be a text`);
}

/**
 * The phrases of the built-in orchestrators' thoughts and reasons, by number
 * (append only: a stored number always means the same phrase). A text that
 * is one of them around a variable part is stored as `[number, part]`.
 */
const PHRASES: ReadonlyArray<readonly [string, string]> = [
  ['Returning the reply of ', ' to the user'],
  ['answered by ', ''],
  ['matched keywords: ', ''],
  ['Keyword scores: ', ''],
];

export function packText(value: string | undefined): unknown {
  if (value === undefined) return null;
  for (let index = 0; index < PHRASES.length; index++) {
    const [head, tail] = PHRASES[index] as readonly [string, string];
    if (value.length >= head.length + tail.length && value.startsWith(head) && value.endsWith(tail))
      return [index + 1, value.slice(head.length, value.length - tail.length)];
  }
  return value;
}

/** The text {@link packText} packed (a phrase filled in, or the text as it is). */
export function unpackText(value: unknown, what: string): string {
  if (Array.isArray(value)) {
    const phrase = PHRASES[(value[0] as number) - 1];
    if (!phrase) throw new TypeError(`${what} names an unknown phrase`);
    return `${phrase[0]}${text(value[1], what)}${phrase[1]}`;
  }
  return text(value, what);
}
