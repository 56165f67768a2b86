import { ConfigurationError, RequestContext, ValidationError } from '@switchboard/core';
import type {
  CollectionOptions,
  MetadataFilter,
  MetadataValue,
  RetrievalDocument,
  SearchOptions,
} from './vector-store.js';

/** The bounds every store enforces; each can be lowered or raised at construction. */
export interface VectorStoreLimits {
  /** Documents per collection. Default 10 000. */
  maxDocuments?: number;
  /** Characters per document. Default 200 000. */
  maxDocumentChars?: number;
  /** Documents per `add` call. Default 1 000. */
  maxBatch?: number;
  /** Characters of a search query. Default 5 000. */
  maxQueryChars?: number;
  /** Collections per tenant. Default 100. */
  maxCollections?: number;
}

/** Checked limits with their defaults. */
export type Limits = Required<VectorStoreLimits>;

const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const MAX_METADATA_KEYS = 20;
const MAX_METADATA_STRING = 256;
const MAX_ID_CHARS = 256;
/** The most matches one search returns. */
export const MAX_TOP_K = 100;

/** The limits with defaults, checked. */
export function limitsOf(owner: string, limits: VectorStoreLimits = {}): Limits {
  const checked = {
    maxDocuments: limits.maxDocuments ?? 10_000,
    maxDocumentChars: limits.maxDocumentChars ?? 200_000,
    maxBatch: limits.maxBatch ?? 1000,
    maxQueryChars: limits.maxQueryChars ?? 5000,
    maxCollections: limits.maxCollections ?? 100,
  };
  for (const [key, value] of Object.entries(checked)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new ConfigurationError({ message: `${owner}: ${key} must be a positive integer` });
  }
  return checked;
}

/** The tenant and collection an operation is on: checked names, the tenant from the request by default. */
export function collectionOf({ collection = 'default', tenantId }: CollectionOptions = {}): {
  tenant: string;
  collection: string;
} {
  const tenant = tenantId ?? RequestContext.tryCurrent()?.tenantId ?? 'default';
  for (const [what, name] of [
    ['tenantId', tenant],
    ['collection', collection],
  ] as const) {
    if (!NAME.test(name))
      throw new ValidationError({
        message: `${what} must be 1 to 128 letters, digits, '_', '.', ':' or '-'`,
      });
  }
  return { tenant, collection };
}

function checkMetadata(id: string, metadata: RetrievalDocument['metadata']): void {
  if (metadata === undefined) return;
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_KEYS)
    throw new ValidationError({ message: `document '${id}': at most ${MAX_METADATA_KEYS} metadata keys` });
  for (const [key, value] of entries) {
    const ok =
      (typeof value === 'string' && value.length <= MAX_METADATA_STRING) ||
      (typeof value === 'number' && Number.isFinite(value)) ||
      typeof value === 'boolean';
    if (!ok || key.length === 0 || key.length > 64)
      throw new ValidationError({
        message: `document '${id}': metadata '${key.slice(0, 64)}' must be a string (at most ${MAX_METADATA_STRING} characters), a finite number or a boolean`,
      });
  }
}

/** Checks a batch before anything is stored; throws a `ValidationError` naming the first problem. */
export function checkDocuments(documents: readonly RetrievalDocument[], limits: Limits): void {
  if (!Array.isArray(documents)) throw new ValidationError({ message: 'add() takes an array of documents' });
  if (documents.length > limits.maxBatch)
    throw new ValidationError({ message: `at most ${limits.maxBatch} documents per add() call` });
  const ids = new Set<string>();
  for (const document of documents) {
    const { id, text, source } = document ?? {};
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_CHARS)
      throw new ValidationError({ message: `every document needs an id of 1 to ${MAX_ID_CHARS} characters` });
    if (ids.has(id))
      throw new ValidationError({ message: `document '${id}' appears twice in one add() call` });
    ids.add(id);
    if (typeof text !== 'string' || text.trim() === '')
      throw new ValidationError({ message: `document '${id}' has no text` });
    if (text.length > limits.maxDocumentChars)
      throw new ValidationError({
        message: `document '${id}' has ${text.length} characters; the limit is ${limits.maxDocumentChars}`,
      });
    if (source !== undefined && (typeof source !== 'string' || source.length > 2048))
      throw new ValidationError({
        message: `document '${id}': source must be a string of at most 2 048 characters`,
      });
    checkMetadata(id, document.metadata);
  }
}

/** Throws when a collection would hold more than `maxDocuments`. */
export function checkCapacity(total: number, limits: Limits): void {
  if (total > limits.maxDocuments)
    throw new ValidationError({
      message: `the collection would hold ${total} documents; the limit is ${limits.maxDocuments}`,
    });
}

/** Throws when a tenant would hold more than `maxCollections`. */
export function checkCollections(total: number, limits: Limits): void {
  if (total > limits.maxCollections)
    throw new ValidationError({
      message: `the tenant would hold ${total} collections; the limit is ${limits.maxCollections}`,
    });
}

/** A search's checked settings. */
export function searchOf(
  query: string,
  { topK = 20, minScore = 0, filter }: SearchOptions,
  limits: Limits,
): { topK: number; minScore: number; filter: [string, MetadataValue[]][] } {
  if (typeof query !== 'string' || query.trim() === '')
    throw new ValidationError({ message: 'the search query is empty' });
  if (query.length > limits.maxQueryChars)
    throw new ValidationError({
      message: `the search query has ${query.length} characters; the limit is ${limits.maxQueryChars}`,
    });
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K)
    throw new ValidationError({ message: `topK must be an integer from 1 to ${MAX_TOP_K}` });
  if (typeof minScore !== 'number' || !(minScore >= 0 && minScore <= 1))
    throw new ValidationError({ message: 'minScore must be a number from 0 to 1' });
  return { topK, minScore, filter: filterEntries(filter) };
}

function filterEntries(filter: MetadataFilter | undefined): [string, MetadataValue[]][] {
  if (filter === undefined) return [];
  const entries = Object.entries(filter);
  if (entries.length > MAX_METADATA_KEYS)
    throw new ValidationError({ message: `a filter has at most ${MAX_METADATA_KEYS} keys` });
  return entries.map(([key, value]) => {
    const values = Array.isArray(value) ? [...value] : [value as MetadataValue];
    if (
      values.length === 0 ||
      values.length > 100 ||
      !values.every((item) => ['string', 'number', 'boolean'].includes(typeof item))
    )
      throw new ValidationError({
        message: `filter '${key.slice(0, 64)}' must be a string, number or boolean, or 1 to 100 of them`,
      });
    return [key, values];
  });
}

/** Whether metadata passes a checked filter. */
export function matchesFilter(
  metadata: Readonly<Record<string, MetadataValue>>,
  filter: readonly [string, readonly MetadataValue[]][],
): boolean {
  return filter.every(
    ([key, values]) => Object.hasOwn(metadata, key) && values.includes(metadata[key] as MetadataValue),
  );
}
