import { ConfigurationError } from '@switchboard/core';
import postgres, { type Sql } from 'postgres';
import { type ChunkingOptions, chunkingOf, chunkText } from './chunking.js';
import type { Embedder } from './embedder.js';
import {
  checkCapacity,
  checkCollections,
  checkDocuments,
  collectionOf,
  type Limits,
  limitsOf,
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

/** Options of {@link createPostgresVectorStore}. */
export interface PostgresVectorStoreOptions extends ChunkingOptions, VectorStoreLimits {
  /** A connection string (`postgres://…`), or pass `sql`. */
  url?: string;
  /** A `postgres` client you created; the store then leaves closing it to you. */
  sql?: Sql;
  /** The schema of the table, created when missing. Default `public`. */
  schema?: string;
  /** The table, created when missing. Default `switchboard_retrieval`. */
  table?: string;
  /**
   * `auto` (the default): `cosine` when an embedder is given and
   * `CREATE EXTENSION IF NOT EXISTS vector` succeeds (pgvector, exact cosine
   * over every chunk of the collection), else `full-text`. `cosine` insists
   * on pgvector; `full-text` uses PostgreSQL's own text search
   * (`ts_rank_cd`, scaled to 0–1) and never embeds.
   */
  ranking?: 'auto' | 'cosine' | 'full-text';
  /** The embedder for `cosine` ranking. */
  embed?: Embedder;
  /** The text-search configuration of `full-text` ranking. Default `english`. */
  textSearchConfig?: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

interface Row {
  document_id: string;
  chunk_index: number;
  source: string;
  metadata: Record<string, MetadataValue>;
  text: string;
  score: number;
}

/** A {@link VectorStore} on PostgreSQL; see {@link createPostgresVectorStore}. */
export class PostgresVectorStore implements VectorStore {
  readonly ranking: 'cosine' | 'full-text';
  readonly #sql: Sql;
  readonly #owned: boolean;
  readonly #table: string;
  readonly #config: string;
  readonly #embed: Embedder | undefined;
  readonly #chunking: Required<ChunkingOptions>;
  readonly #limits: Limits;

  /** @internal Use {@link createPostgresVectorStore}, which prepares the table first. */
  constructor(init: {
    sql: Sql;
    owned: boolean;
    table: string;
    config: string;
    ranking: 'cosine' | 'full-text';
    embed: Embedder | undefined;
    chunking: Required<ChunkingOptions>;
    limits: Limits;
  }) {
    this.#sql = init.sql;
    this.#owned = init.owned;
    this.#table = init.table;
    this.#config = init.config;
    this.ranking = init.ranking;
    this.#embed = init.embed;
    this.#chunking = init.chunking;
    this.#limits = init.limits;
  }

  async add(documents: readonly RetrievalDocument[], options?: CollectionOptions): Promise<AddResult> {
    checkDocuments(documents, this.#limits);
    const { tenant, collection } = collectionOf(options);
    const pieces = documents.map((document) => chunkText(document.text, this.#chunking));
    const vectors =
      this.#embed && this.ranking === 'cosine' ? await this.#embed.embed(pieces.flat()) : undefined;
    const rows = {
      documentIds: [] as string[],
      indexes: [] as number[],
      sources: [] as string[],
      metadata: [] as string[],
      texts: [] as string[],
      vectors: [] as string[],
    };
    documents.forEach((document, index) => {
      (pieces[index] ?? []).forEach((text, chunkIndex) => {
        rows.documentIds.push(document.id);
        rows.indexes.push(chunkIndex);
        rows.sources.push(document.source ?? document.id);
        rows.metadata.push(JSON.stringify(document.metadata ?? {}));
        rows.texts.push(text);
        if (vectors) rows.vectors.push(`[${(vectors[rows.vectors.length] ?? []).join(',')}]`);
      });
    });
    const ids = documents.map((document) => document.id);
    const table = this.#sql.unsafe(this.#table);
    await this.#sql.begin(async (sql) => {
      // One writer per collection at a time, so the capacity check holds under concurrent adds.
      await sql`select pg_advisory_xact_lock(hashtext(${`${tenant}/${collection}`}))`;
      const [counts] = await sql<{ total: number; known: number }[]>`
        select count(distinct document_id)::int as total,
               count(distinct document_id) filter (where document_id = any(${sql.array(ids)}::text[]))::int as known
        from ${table} where tenant = ${tenant} and collection = ${collection}`;
      const total = counts?.total ?? 0;
      checkCapacity(total + ids.length - (counts?.known ?? 0), this.#limits);
      if (total === 0) {
        const [collections] = await sql<{ count: number }[]>`
          select count(distinct collection)::int as count from ${table} where tenant = ${tenant}`;
        checkCollections((collections?.count ?? 0) + 1, this.#limits);
      }
      await sql`delete from ${table} where tenant = ${tenant} and collection = ${collection}
        and document_id = any(${sql.array(ids)}::text[])`;
      if (vectors)
        await sql`insert into ${table} (tenant, collection, document_id, chunk_index, source, metadata, text, embedding)
          select ${tenant}, ${collection}, d, i, s, m::jsonb, t, v::vector
          from unnest(${sql.array(rows.documentIds)}::text[], ${sql.array(rows.indexes)}::int[], ${sql.array(rows.sources)}::text[],
                      ${sql.array(rows.metadata)}::text[], ${sql.array(rows.texts)}::text[], ${sql.array(rows.vectors)}::text[]) as u(d, i, s, m, t, v)`;
      else
        await sql`insert into ${table} (tenant, collection, document_id, chunk_index, source, metadata, text)
          select ${tenant}, ${collection}, d, i, s, m::jsonb, t
          from unnest(${sql.array(rows.documentIds)}::text[], ${sql.array(rows.indexes)}::int[], ${sql.array(rows.sources)}::text[],
                      ${sql.array(rows.metadata)}::text[], ${sql.array(rows.texts)}::text[]) as u(d, i, s, m, t)`;
    });
    return { documents: documents.length, chunks: rows.texts.length };
  }

  async search(query: string, options: SearchOptions = {}): Promise<RetrievalMatch[]> {
    const { topK, minScore, filter } = searchOf(query, options, this.#limits);
    const { tenant, collection } = collectionOf(options);
    const sql = this.#sql;
    const table = sql.unsafe(this.#table);
    let where = sql`tenant = ${tenant} and collection = ${collection}`;
    for (const [key, values] of filter) {
      const anyOf = values
        .map((value) => sql`metadata @> ${sql.json({ [key]: value })}`)
        .reduce((left, right) => sql`${left} or ${right}`);
      where = sql`${where} and (${anyOf})`;
    }
    let rows: Row[];
    if (this.ranking === 'cosine' && this.#embed) {
      const [vector] = await this.#embed.embed([query], { signal: options.signal });
      const literal = `[${(vector ?? []).join(',')}]`;
      rows = await sql<Row[]>`
        select * from (
          select document_id, chunk_index, source, metadata, text,
                 greatest(0, least(1, 1 - (embedding <=> ${literal}::vector)))::float8 as score
          from ${table} where ${where}) as scored
        where score > 0 and score >= ${minScore}
        order by score desc, document_id, chunk_index limit ${topK}`;
    } else {
      const config = sql.unsafe(`'${this.#config}'::regconfig`);
      rows = await sql<Row[]>`
        select * from (
          select document_id, chunk_index, source, metadata, text,
                 ts_rank_cd(tsv, q, 32)::float8 as score
          from ${table}, (select replace(plainto_tsquery(${config}, ${query})::text, ' & ', ' | ')::tsquery as q) as words
          where ${where} and tsv @@ q) as scored
        where score > 0 and score >= ${minScore}
        order by score desc, document_id, chunk_index limit ${topK}`;
    }
    return rows.map((row) => ({
      id: `${row.document_id}#${row.chunk_index}`,
      documentId: row.document_id,
      text: row.text,
      source: row.source,
      metadata: row.metadata,
      score: Number(row.score),
    }));
  }

  async delete(documentIds: readonly string[], options?: CollectionOptions): Promise<number> {
    const { tenant, collection } = collectionOf(options);
    const rows = await this.#sql<{ document_id: string }[]>`
      delete from ${this.#sql.unsafe(this.#table)} where tenant = ${tenant} and collection = ${collection}
        and document_id = any(${this.#sql.array([...documentIds])}::text[]) returning document_id`;
    return new Set(rows.map((row) => row.document_id)).size;
  }

  async count(options?: CollectionOptions): Promise<CollectionCount> {
    const { tenant, collection } = collectionOf(options);
    const [row] = await this.#sql<{ documents: number; chunks: number }[]>`
      select count(distinct document_id)::int as documents, count(*)::int as chunks
      from ${this.#sql.unsafe(this.#table)} where tenant = ${tenant} and collection = ${collection}`;
    return { documents: row?.documents ?? 0, chunks: row?.chunks ?? 0 };
  }

  async close(): Promise<void> {
    if (this.#owned) await this.#sql.end({ timeout: 5 });
  }
}

/** Whether pgvector can be used: the extension exists or may be created here. */
async function pgvectorAvailable(sql: Sql): Promise<boolean> {
  try {
    await sql`create extension if not exists vector`;
    return true;
  } catch {
    return false;
  }
}

/**
 * Connects to PostgreSQL, decides the ranking, creates the schema and table
 * when missing, and returns the store. With pgvector (`ranking: 'cosine'`)
 * chunks keep their embeddings and a search scores every chunk of the
 * collection by exact cosine, as the in-memory store does; without it
 * (`full-text`), chunks are ranked by PostgreSQL's own text search
 * (`ts_rank_cd` over a generated `tsvector` with a GIN index, query words
 * joined by OR, score scaled to 0–1 as rank / (rank + 1)) and nothing is
 * embedded. Every row carries its tenant and collection, and every
 * statement filters on both. Needs the `postgres` package (an optional peer).
 *
 * @example
 * ```ts
 * import { createPostgresVectorStore } from '@switchboard/runtime/postgres';
 * const store = await createPostgresVectorStore({ url: process.env.DATABASE_URL, embed });
 * console.log(store.ranking); // 'cosine' with pgvector, else 'full-text'
 * ```
 */
export async function createPostgresVectorStore({
  url,
  sql: given,
  schema = 'public',
  table = 'switchboard_retrieval',
  ranking = 'auto',
  embed,
  textSearchConfig = 'english',
  chunkSize,
  overlap,
  ...limits
}: PostgresVectorStoreOptions): Promise<PostgresVectorStore> {
  const owner = 'createPostgresVectorStore';
  for (const [what, name] of [
    ['schema', schema],
    ['table', table],
    ['textSearchConfig', textSearchConfig],
  ] as const) {
    if (!IDENTIFIER.test(name))
      throw new ConfigurationError({
        message: `${owner}: ${what} must be a lower-case SQL name ([a-z_][a-z0-9_]*)`,
      });
  }
  if ((url === undefined) === (given === undefined))
    throw new ConfigurationError({ message: `${owner}: pass either url or sql` });
  if (ranking === 'cosine' && typeof embed?.embed !== 'function')
    throw new ConfigurationError({ message: `${owner}: cosine ranking needs an embedder (embed)` });
  const chunking = chunkingOf(owner, { chunkSize, overlap });
  const checkedLimits = limitsOf(owner, limits);
  const sql = given ?? postgres(url as string, { onnotice: () => {}, connect_timeout: 10 });
  try {
    let chosen: 'cosine' | 'full-text' = 'full-text';
    if (ranking !== 'full-text' && embed) {
      if (await pgvectorAvailable(sql)) chosen = 'cosine';
      else if (ranking === 'cosine')
        throw new ConfigurationError({
          message: `${owner}: cosine ranking needs the pgvector extension, which this database cannot create`,
        });
    }
    const qualified = `"${schema}"."${table}"`;
    await sql.unsafe(`create schema if not exists "${schema}"`);
    await sql.unsafe(`create table if not exists ${qualified} (
      tenant text not null,
      collection text not null,
      document_id text not null,
      chunk_index int not null,
      source text not null,
      metadata jsonb not null default '{}',
      text text not null,
      tsv tsvector generated always as (to_tsvector('${textSearchConfig}'::regconfig, text)) stored,
      primary key (tenant, collection, document_id, chunk_index))`);
    await sql.unsafe(`create index if not exists "${table}_tsv" on ${qualified} using gin (tsv)`);
    if (chosen === 'cosine')
      await sql.unsafe(`alter table ${qualified} add column if not exists embedding vector`);
    return new PostgresVectorStore({
      sql,
      owned: given === undefined,
      table: qualified,
      config: textSearchConfig,
      ranking: chosen,
      embed: chosen === 'cosine' ? embed : undefined,
      chunking,
      limits: checkedLimits,
    });
  } catch (error) {
    if (given === undefined) await sql.end({ timeout: 1 }).catch(() => undefined);
    throw error;
  }
}
