/**
 * The `VectorStore` contract: what a retrieval agent searches and what
 * ingestion writes to. Types only.
 *
 * @module
 */

/** A metadata value a document may carry and a filter may match. */
export type MetadataValue = string | number | boolean;

/** A document to ingest: it is split into chunks, each embedded and stored with the document's source and metadata. */
export interface RetrievalDocument {
  /** Unique within its collection; adding a document with a known id replaces it. */
  id: string;
  /** The text, at most the store's `maxDocumentChars`. */
  text: string;
  /** Where it came from (a URL, a file name); shown with each match. Default: the id. */
  source?: string;
  /** Flat metadata to filter on: at most 20 keys, strings of at most 256 characters. */
  metadata?: Readonly<Record<string, MetadataValue>>;
}

/**
 * A metadata filter: every key must match; a value matches equal metadata,
 * an array matches any of its values.
 *
 * @example
 * ```ts
 * const filter: MetadataFilter = { lang: 'en', team: ['billing', 'support'] };
 * ```
 */
export type MetadataFilter = Readonly<Record<string, MetadataValue | readonly MetadataValue[]>>;

/** Which collection: a tenant's named collection. Tenants never see each other's collections. */
export interface CollectionOptions {
  /** Default `default`. */
  collection?: string;
  /** Default: the current request's tenant, else `default`. */
  tenantId?: string;
}

/** Options of `VectorStore.search`. */
export interface SearchOptions extends CollectionOptions {
  /** How many matches at most (1 to 100). Default 20. */
  topK?: number;
  /** Matches scoring below this (0 to 1) are left out. Default 0. */
  minScore?: number;
  filter?: MetadataFilter;
  signal?: AbortSignal;
}

/** One chunk found by a search. */
export interface RetrievalMatch {
  /** The chunk's id: `<documentId>#<chunk index>`. */
  id: string;
  documentId: string;
  /** The chunk's text. */
  text: string;
  source: string;
  metadata: Record<string, MetadataValue>;
  /** Relevance from 0 (unrelated) to 1; higher is better. What it measures depends on the store's `ranking`. */
  score: number;
}

/** What one `add` stored. */
export interface AddResult {
  documents: number;
  chunks: number;
}

/** How many documents and chunks a collection holds. */
export interface CollectionCount {
  documents: number;
  chunks: number;
}

/**
 * A searchable store of document chunks. Stores embed with the embedder
 * they were created with, at ingestion and at search alike, so that queries
 * and documents share one vector space.
 */
export interface VectorStore {
  /**
   * How matches are ranked: `cosine` (exact cosine similarity of
   * embeddings, clamped to 0–1) or `full-text` (the database's text ranking,
   * scaled to 0–1; no embeddings).
   */
  readonly ranking: 'cosine' | 'full-text';
  /**
   * Splits each document into chunks, embeds them and stores them, replacing
   * a document with the same id. Throws a `ValidationError` (nothing stored)
   * when a document or the collection would exceed the store's limits.
   */
  add(documents: readonly RetrievalDocument[], options?: CollectionOptions): Promise<AddResult>;
  /** The chunks most relevant to `query`, best first, at most `topK`. */
  search(query: string, options?: SearchOptions): Promise<RetrievalMatch[]>;
  /** Removes documents by id; returns how many were there. */
  delete(documentIds: readonly string[], options?: CollectionOptions): Promise<number>;
  count(options?: CollectionOptions): Promise<CollectionCount>;
  /** Releases connections (a store that holds none has nothing to do). */
  close?(): Promise<void>;
}
