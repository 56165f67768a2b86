import { ConfigurationError } from '@switchboard/core';
import { type ChunkingOptions, chunkingOf, chunkText } from './chunking.js';
import type { Embedder } from './embedder.js';
import {
  checkCapacity,
  checkCollections,
  checkDocuments,
  collectionOf,
  type Limits,
  limitsOf,
  matchesFilter,
  searchOf,
  type VectorStoreLimits,
} from './store-limits.js';
import type {
  AddResult,
  CollectionCount,
  CollectionOptions,
  MetadataValue,
  RetrievalDocument,
  RetrievalMatch,
  SearchOptions,
  VectorStore,
} from './vector-store.js';

/** Options of {@link InMemoryVectorStore}. */
export interface InMemoryVectorStoreOptions extends ChunkingOptions, VectorStoreLimits {
  /** Embeds chunks at ingestion and queries at search. */
  embed: Embedder;
}

interface StoredChunk {
  text: string;
  /** Unit length, so a dot product is the cosine. */
  vector: Float32Array;
}

interface StoredDocument {
  id: string;
  source: string;
  metadata: Record<string, MetadataValue>;
  chunks: StoredChunk[];
}

function unit(vector: readonly number[]): Float32Array {
  const length = Math.hypot(...vector);
  const result = new Float32Array(vector.length);
  if (length > 0)
    for (let index = 0; index < vector.length; index++) result[index] = (vector[index] ?? 0) / length;
  return result;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += (a[index] ?? 0) * (b[index] ?? 0);
  return sum;
}

/**
 * The embedded {@link VectorStore}: chunks and their vectors in process
 * memory, searched by exact cosine similarity (every chunk of the collection
 * is scored; no approximate index), scores clamped to 0–1 (a chunk sharing
nothing with the query, score 0, is never a match). Collections are
 * per tenant and bounded (`maxDocuments`, `maxCollections`, …). Lost when the
 * process ends: for several replicas or durable documents use the PostgreSQL
 * store (`@switchboard/runtime/postgres`).
 *
 * @example
 * ```ts
 * const store = new InMemoryVectorStore({ embed: openAIEmbedder({ model: 'text-embedding-3-small', apiKey }) });
 * await store.add([{ id: 'refunds', text: 'Refunds take 5 days.', metadata: { lang: 'en' } }]);
 * const matches = await store.search('how long do refunds take?', { topK: 3 });
 * ```
 */
export class InMemoryVectorStore implements VectorStore {
  readonly ranking = 'cosine' as const;
  readonly #embed: Embedder;
  readonly #chunking: Required<ChunkingOptions>;
  readonly #limits: Limits;
  #dimensions: number | undefined;
  /** tenant → collection → document id → document. */
  readonly #tenants = new Map<string, Map<string, Map<string, StoredDocument>>>();

  constructor({ embed, chunkSize, overlap, ...limits }: InMemoryVectorStoreOptions) {
    const owner = 'InMemoryVectorStore';
    if (typeof embed?.embed !== 'function')
      throw new ConfigurationError({
        message: `${owner} needs an embedder: { embed: openAIEmbedder({ model, … }) }`,
      });
    this.#embed = embed;
    this.#chunking = chunkingOf(owner, { chunkSize, overlap });
    this.#limits = limitsOf(owner, limits);
  }

  async add(documents: readonly RetrievalDocument[], options?: CollectionOptions): Promise<AddResult> {
    checkDocuments(documents, this.#limits);
    const { tenant, collection } = collectionOf(options);
    const existing = this.#tenants.get(tenant)?.get(collection);
    const fresh = documents.filter((document) => !existing?.has(document.id)).length;
    checkCapacity((existing?.size ?? 0) + fresh, this.#limits);
    if (!existing) checkCollections((this.#tenants.get(tenant)?.size ?? 0) + 1, this.#limits);

    const pieces = documents.map((document) => chunkText(document.text, this.#chunking));
    const vectors = await this.#embed.embed(pieces.flat());
    this.#checkDimensions(vectors);
    let next = 0;
    const built = documents.map(
      (document, index): StoredDocument => ({
        id: document.id,
        source: document.source ?? document.id,
        metadata: { ...document.metadata },
        chunks: (pieces[index] ?? []).map((text) => ({ text, vector: unit(vectors[next++] ?? []) })),
      }),
    );
    // Checked again after the await: another add may have filled the collection meanwhile.
    const tenantCollections = this.#tenants.get(tenant) ?? new Map<string, Map<string, StoredDocument>>();
    const target = tenantCollections.get(collection) ?? new Map<string, StoredDocument>();
    checkCapacity(target.size + built.filter((document) => !target.has(document.id)).length, this.#limits);
    if (!tenantCollections.has(collection)) checkCollections(tenantCollections.size + 1, this.#limits);
    for (const document of built) target.set(document.id, document);
    tenantCollections.set(collection, target);
    this.#tenants.set(tenant, tenantCollections);
    return { documents: built.length, chunks: next };
  }

  async search(query: string, options: SearchOptions = {}): Promise<RetrievalMatch[]> {
    const { topK, minScore, filter } = searchOf(query, options, this.#limits);
    const { tenant, collection } = collectionOf(options);
    const documents = this.#tenants.get(tenant)?.get(collection);
    if (!documents || documents.size === 0) return [];
    const [queryVector] = await this.#embed.embed([query], { signal: options.signal });
    this.#checkDimensions([queryVector ?? []]);
    const target = unit(queryVector ?? []);
    const matches: RetrievalMatch[] = [];
    for (const document of documents.values()) {
      if (!matchesFilter(document.metadata, filter)) continue;
      document.chunks.forEach((chunk, index) => {
        const score = Math.min(1, Math.max(0, dot(target, chunk.vector)));
        if (score <= 0 || score < minScore) return;
        matches.push({
          id: `${document.id}#${index}`,
          documentId: document.id,
          text: chunk.text,
          source: document.source,
          metadata: { ...document.metadata },
          score,
        });
      });
    }
    matches.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
    return matches.slice(0, topK);
  }

  /** Every vector must have the length of the first one the store saw: another embedding model's vectors cannot be compared. */
  #checkDimensions(vectors: readonly (readonly number[])[]): void {
    for (const vector of vectors) {
      this.#dimensions ??= vector.length;
      if (vector.length !== this.#dimensions || vector.length === 0)
        throw new ConfigurationError({
          message: `InMemoryVectorStore: the embedder returned a vector of ${vector.length} dimensions; the store holds ${this.#dimensions}`,
        });
    }
  }

  async delete(documentIds: readonly string[], options?: CollectionOptions): Promise<number> {
    const { tenant, collection } = collectionOf(options);
    const documents = this.#tenants.get(tenant)?.get(collection);
    if (!documents) return 0;
    return documentIds.filter((id) => documents.delete(id)).length;
  }

  async count(options?: CollectionOptions): Promise<CollectionCount> {
    const { tenant, collection } = collectionOf(options);
    const documents = [...(this.#tenants.get(tenant)?.get(collection)?.values() ?? [])];
    return {
      documents: documents.length,
      chunks: documents.reduce((sum, document) => sum + document.chunks.length, 0),
    };
  }
}
