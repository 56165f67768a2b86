import { ConfigurationError } from '@switchboard/core';
import type OpenAI from 'openai';

/** Turns texts into vectors; one embedder serves a store's ingestion and its searches. */
export interface Embedder {
  /** The embedding model, recorded on traces. */
  readonly model: string;
  /** One vector per text, in order, all of one length. */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

/** The part of an `openai` client an embedder uses. */
export type EmbeddingsClient = Pick<OpenAI, 'embeddings'>;

/** Options of {@link openAIEmbedder}. */
export interface OpenAIEmbedderOptions {
  /** The embedding model, e.g. `text-embedding-3-small`. */
  model: string;
  /** A client you constructed; else `apiKey` (and `baseURL` for any OpenAI-compatible `/v1/embeddings`). */
  client?: EmbeddingsClient;
  apiKey?: string;
  baseURL?: string;
  /** Asks the model for vectors of this length (models that support it, e.g. `text-embedding-3-*`). */
  dimensions?: number;
  /** Texts per request. Default 64. */
  batchSize?: number;
}

/**
 * An {@link Embedder} over any OpenAI-compatible `/v1/embeddings` endpoint
 * through the `openai` client (imported on first use, so `openai` stays an
 * optional dependency). Texts go in batches of `batchSize`.
 *
 * @example
 * ```ts
 * const embed = openAIEmbedder({ model: 'text-embedding-3-small', apiKey: process.env.OPENAI_API_KEY });
 * const store = new InMemoryVectorStore({ embed });
 * ```
 */
export function openAIEmbedder({
  model,
  client,
  apiKey,
  baseURL,
  dimensions,
  batchSize = 64,
}: OpenAIEmbedderOptions): Embedder {
  const owner = 'openAIEmbedder';
  if (typeof model !== 'string' || model === '')
    throw new ConfigurationError({ message: `${owner} needs a model, e.g. 'text-embedding-3-small'` });
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 2048)
    throw new ConfigurationError({ message: `${owner}: batchSize must be an integer from 1 to 2 048` });
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || dimensions < 1))
    throw new ConfigurationError({ message: `${owner}: dimensions must be a positive integer` });
  if (client !== undefined && (apiKey !== undefined || baseURL !== undefined))
    throw new ConfigurationError({ message: `${owner}: pass either a client or apiKey/baseURL, not both` });
  if (client === undefined && (typeof apiKey !== 'string' || apiKey === ''))
    throw new ConfigurationError({
      message: `${owner} needs a client or an apiKey (for example apiKey: process.env.OPENAI_API_KEY)`,
    });
  let created: Promise<EmbeddingsClient> | undefined;
  const resolve = (): Promise<EmbeddingsClient> => {
    if (client) return Promise.resolve(client);
    created ??= import('openai').then(
      ({ default: OpenAIClient }) => new OpenAIClient({ apiKey, baseURL }),
      (error: unknown) => {
        created = undefined;
        throw new ConfigurationError({
          message: `${owner} needs the 'openai' package: install it`,
          cause: error,
        });
      },
    );
    return created;
  };
  return {
    model,
    async embed(texts, { signal } = {}) {
      const embeddings = (await resolve()).embeddings;
      const vectors: number[][] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const input = texts.slice(start, start + batchSize);
        const response = await embeddings.create(
          dimensions === undefined ? { model, input } : { model, input, dimensions },
          signal ? { signal } : undefined,
        );
        const ordered = [...response.data].sort((a, b) => a.index - b.index);
        if (ordered.length !== input.length)
          throw new Error(
            `the embeddings endpoint returned ${ordered.length} vectors for ${input.length} texts`,
          );
        for (const item of ordered) vectors.push(Array.from(item.embedding));
      }
      return vectors;
    },
  };
}
