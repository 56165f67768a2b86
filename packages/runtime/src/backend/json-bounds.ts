/**
 * The one bound on the JSON clients send, on every surface (the HTTP API,
 * the OpenAI-compatible routes, A2A and MCP): how deep it nests and how
 * large it is. Checked by walking the parsed value with a stack of its own,
 * never by recursion, so that no depth a client sends can overflow the call
 * stack; nothing below the bound is walked.
 *
 * @module
 */

/** How deep a request body may nest: 32 levels of objects and arrays, the body itself included. */
export const MAX_JSON_DEPTH = 32;

/** How deep metadata stored with a message may nest (`POST /v1/chat`): 8 levels, the metadata object included. */
export const MAX_METADATA_DEPTH = 8;
/** The largest metadata stored with a message, as JSON: 16 KiB. */
export const MAX_METADATA_BYTES = 16 * 1024;

/** A bound on a JSON value. */
export interface JsonBounds {
  /** The most levels of objects and arrays (the value itself is level 1). */
  maxDepth: number;
  /** The most bytes of its JSON text (unchecked without it: the body limit bounds a whole body). */
  maxBytes?: number;
}

/** How many keys of a too-deep value's path {@link jsonBoundsProblem} reports. */
const REPORTED_PATH_KEYS = 4;

/**
 * Where `value` first nests deeper than `maxDepth` levels: the path of its
 * first keys (at most {@link REPORTED_PATH_KEYS}, `[]` for the value
 * itself), or undefined when it is within them. Never walks deeper.
 */
function tooDeepAt(value: unknown, maxDepth: number): string[] | undefined {
  const stack: Array<[unknown, number, readonly string[]]> = [[value, 1, []]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [current, depth, path] = item;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > maxDepth) return [...path];
    for (const [key, child] of Object.entries(current))
      stack.push([child, depth + 1, path.length < REPORTED_PATH_KEYS ? [...path, key] : path]);
  }
  return undefined;
}

/** What is wrong with a JSON value (see {@link jsonBoundsProblem}). */
export interface JsonBoundsProblem {
  /** Where: the first keys of the path to the value too deep (empty for the whole value, or its size). */
  path: readonly string[];
  /** What, as a sentence about `what` (e.g. `metadata must nest at most 8 levels`). */
  message: string;
}

/**
 * What is wrong with `value` against `bounds`, or undefined when it is
 * within them. The depth is checked first, so the size is measured only on
 * a value shallow enough to serialise.
 *
 * @example
 * ```ts
 * const problem = jsonBoundsProblem(metadata, { maxDepth: 8, maxBytes: 16_384 }, 'metadata');
 * if (problem) throw new ValidationError({ message: problem.message });
 * ```
 */
export function jsonBoundsProblem(
  value: unknown,
  { maxDepth, maxBytes }: JsonBounds,
  what: string,
): JsonBoundsProblem | undefined {
  const path = tooDeepAt(value, maxDepth);
  if (path) return { path, message: `${what} must nest at most ${maxDepth} levels` };
  if (maxBytes !== undefined && Buffer.byteLength(JSON.stringify(value) ?? '') > maxBytes)
    return { path: [], message: `${what} must be at most ${maxBytes} bytes as JSON` };
  return undefined;
}

/**
 * Parses a request body that should be JSON: `{ value }` when it parses and
 * nests at most {@link MAX_JSON_DEPTH} levels, `{ problem }` when it parses
 * but nests deeper, `{ malformed: true }` when it is not JSON. (`JSON.parse`
 * itself does not recurse, so it takes any depth.)
 */
export function parseBoundedJson(
  text: string,
): { value: unknown } | { value: unknown; problem: JsonBoundsProblem } | { malformed: true } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { malformed: true };
  }
  // Nesting deeper than the bound takes more opening brackets than the bound: a body with fewer (nearly every
  // one) is not walked. The walk was 3.4% of a keyed chat request's CPU in the bench's profile.
  if (!hasMoreOpenings(text, MAX_JSON_DEPTH)) return { value };
  const problem = jsonBoundsProblem(value, { maxDepth: MAX_JSON_DEPTH }, 'request JSON');
  return problem === undefined ? { value } : { value, problem };
}

/**
 * Whether `text` holds more than `count` of `{` and `[` (inside strings too,
 * which only makes it say yes more often). `indexOf` jumps from bracket to
 * bracket natively: a long message with a few brackets costs a few calls.
 */
function hasMoreOpenings(text: string, count: number): boolean {
  let seen = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++seen > count) return true;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++seen > count) return true;
  return false;
}
