import { randomBytes } from 'node:crypto';
import postgres, { type Sql } from 'postgres';
import { afterAll, beforeAll } from 'vitest';

/** The PostgreSQL the tests use: `DATABASE_URL`, or the local default (trust auth, database `test`). */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** What {@link usePostgres} gives a test file. */
export interface PostgresTestContext {
  /** A client for the file (connected once `beforeAll` has run). */
  readonly sql: Sql;
  /** A fresh schema name such as `sbtest_1a2b3c4d`; every schema handed out is dropped after the file's tests. */
  schema(): string;
}

function unreachableMessage(reason: string): string {
  const where =
    process.env.CI === 'true'
      ? 'CI=true, so PostgreSQL must be provided by the CI environment'
      : 'start the local PostgreSQL';
  return (
    `These tests need PostgreSQL, but it is not reachable at ${new URL(DATABASE_URL).host} (${reason}). ` +
    `They fail rather than skip: ${where}, or point DATABASE_URL at a running server.`
  );
}

/**
 * Registers `beforeAll` / `afterAll` hooks for a test file that needs
 * PostgreSQL: checks that it answers (failing every test with a clear
 * message when it does not, locally and in CI alike) and drops the schemas
 * the file handed out.
 */
export function usePostgres(): PostgresTestContext {
  const schemas: string[] = [];
  const sql = postgres(DATABASE_URL, { onnotice: () => {}, connect_timeout: 3, max: 4 });
  beforeAll(async () => {
    try {
      await sql`select 1`;
    } catch (error) {
      throw new Error(unreachableMessage(error instanceof Error ? error.message : String(error)));
    }
  });
  afterAll(async () => {
    try {
      for (const schema of schemas) await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    } finally {
      await sql.end({ timeout: 2 });
    }
  });
  return {
    sql,
    schema() {
      const name = `sbtest_${randomBytes(4).toString('hex')}`;
      schemas.push(name);
      return name;
    },
  };
}
