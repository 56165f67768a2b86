/** The number of dimensions of a scripted embedding when the request names none. */
export const SCRIPTED_EMBEDDING_DIMENSIONS = 512;

const WORD = /[\p{L}\p{N}]+/gu;

/** Words too common to say what a text is about; left out so that they do not make unrelated texts near. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can do does for from has have how i if in into is it its me my no not of on or ' +
    'our so that the their them then there these they this to was we were what when where which who why will ' +
    'with you your'
  ).split(' '),
);

/** A word's stem for hashing: lower case, a plural or `-ing`/`-ed` ending dropped, so "routers" meets "router". */
function stem(word: string): string {
  const lower = word.toLowerCase();
  if (lower.length > 5 && lower.endsWith('ing')) return lower.slice(0, -3);
  if (lower.length > 4 && lower.endsWith('ed')) return lower.slice(0, -2);
  if (lower.length > 3 && lower.endsWith('s') && !lower.endsWith('ss')) return lower.slice(0, -1);
  return lower;
}

/** FNV-1a, 32 bits, with MurmurHash3's finaliser so that the low bits (the slot) are well mixed too. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193);
  }
  value ^= value >>> 16;
  value = Math.imul(value, 0x85ebca6b);
  value ^= value >>> 13;
  value = Math.imul(value, 0xc2b2ae35);
  value ^= value >>> 16;
  return value >>> 0;
}

/**
 * A deterministic embedding of `text`: a hashed bag of words (each word's stem,
 * common English words left out, adds 1 to one of `dimensions` slots),
 * normalised to length 1. Texts that
 * share words are near each other by cosine; the same text always gives the
 * same vector. Not a language model: it knows no synonyms.
 *
 * @example
 * ```ts
 * const a = hashedEmbedding('refund a broken order');
 * const b = hashedEmbedding('how do refunds work');
 * // cosine(a, b) > cosine(a, hashedEmbedding('weather in Oslo'))
 * ```
 */
export function hashedEmbedding(text: string, dimensions = SCRIPTED_EMBEDDING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const [word] of text.matchAll(WORD)) {
    if (STOP_WORDS.has(word.toLowerCase())) continue;
    const slot = hash(stem(word));
    vector[slot % dimensions] = (vector[slot % dimensions] ?? 0) + 1;
  }
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}

/** A float32 vector as base64 (the `openai` client asks for this encoding unless told otherwise). */
function base64Of(vector: readonly number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** Why an embeddings request body cannot be answered, or its texts and settings. */
export function embeddingsRequest(
  body: unknown,
):
  | { ok: true; texts: string[]; dimensions: number; base64: boolean; model: string }
  | { ok: false; problem: string } {
  if (typeof body !== 'object' || body === null)
    return { ok: false, problem: 'the body is not a JSON object' };
  const { input, dimensions, encoding_format: format, model } = body as Record<string, unknown>;
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string'))
    return { ok: false, problem: "'input' must be a string or a non-empty array of strings" };
  if (typeof model !== 'string' || model === '') return { ok: false, problem: "'model' is required" };
  if (dimensions !== undefined && !(Number.isInteger(dimensions) && (dimensions as number) > 0))
    return { ok: false, problem: "'dimensions' must be a positive integer" };
  if (format !== undefined && format !== 'float' && format !== 'base64')
    return { ok: false, problem: "'encoding_format' must be 'float' or 'base64'" };
  return {
    ok: true,
    texts: texts as string[],
    dimensions: (dimensions as number | undefined) ?? SCRIPTED_EMBEDDING_DIMENSIONS,
    base64: format === 'base64',
    model,
  };
}

/** The OpenAI embeddings response for `texts`: one hashed embedding each, in order. */
export function embeddingsBody(
  texts: readonly string[],
  { dimensions, base64, model }: { dimensions: number; base64: boolean; model: string },
): unknown {
  const tokens = texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return {
    object: 'list',
    model,
    data: texts.map((text, index) => {
      const vector = hashedEmbedding(text, dimensions);
      return { object: 'embedding', index, embedding: base64 ? base64Of(vector) : vector };
    }),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
