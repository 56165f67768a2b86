import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_DIR, type ApiExport, apiEntries, readExports, renderReport } from '../scripts/api-report.js';

const entries = apiEntries();
let exports: Map<string, ApiExport[]>;

// One TypeScript program over every package's sources: tens of seconds on a loaded 2-core machine.
beforeAll(() => {
  exports = readExports(entries);
}, 300_000);

describe('the API report (api/*.api.md)', () => {
  it.each(entries.map((entry) => [entry.specifier, entry] as const))('lists what %s exports', (_, entry) => {
    const committed = existsSync(`${API_DIR}${entry.reportName}`)
      ? readFileSync(`${API_DIR}${entry.reportName}`, 'utf8')
      : '';
    expect(
      renderReport(entry, exports.get(entry.specifier)!),
      `${entry.specifier} exports something other than api/${entry.reportName} lists: review the diff, then run \`pnpm api:update\` and commit the report`,
    ).toBe(committed);
  });

  it.each(entries.map((entry) => [entry.specifier, entry] as const))(
    'says which names of %s are values: the loaded module has exactly those',
    async (specifier, entry) => {
      // The entry's source file: the docs package does not depend on every package it reports on.
      const loaded = (await import(/* @vite-ignore */ pathToFileURL(entry.file).href)) as Record<
        string,
        unknown
      >;
      const values = exports
        .get(specifier)!
        .filter((item) => !item.typeOnly)
        .map((item) => item.name);
      expect(Object.keys(loaded).sort()).toEqual(values);
    },
  );

  it('has a report for each entry point and none for an entry point that is gone', () => {
    const reports = readdirSync(API_DIR).filter((name) => name.endsWith('.api.md'));
    expect(reports.sort()).toEqual(entries.map((entry) => entry.reportName).sort());
  });
});

/** What issue 35 moved out of the main exports: internals of the turn record, tracing, stores and patterns. */
const INTERNAL_NAMES: Record<string, string[]> = {
  '@switchboard/core': ['traceContextSlot', 'validateDecision', 'describeError'],
  '@switchboard/runtime': [
    'transition',
    'isFinished',
    'keepAliveUntil',
    'pendingApprovals',
    'startGeneration',
    'endGeneration',
    'GenerationStart',
    'estimateTokens',
    'estimateMessageTokens',
    'estimateRequestTokens',
    'TOKEN_ESTIMATE',
    'bindMemory',
    'memoryNamespace',
    'historyPageOf',
    'canTouch',
    'sessionIdForKey',
    'nestingDepth',
    'clientResolver',
    'matchesAgent',
  ],
  '@switchboard/orchestrators': [
    'tallyVotes',
    'normaliseAnswer',
    'MISSING_MARKER',
    'NO_TASK',
    'KeywordMatcher',
  ],
};

describe('the main exports', () => {
  it.each(Object.entries(INTERNAL_NAMES))('of %s carry none of its internals', (specifier, names) => {
    const exported = new Set(exports.get(specifier)?.map((item) => item.name));
    expect(exported.size).toBeGreaterThan(0);
    expect(names.filter((name) => exported.has(name))).toEqual([]);
  });

  it('spell each acronym one way (Llm…, not LLM…), but for the deprecated aliases', () => {
    // Product names keep their own spelling (OpenAI).
    const shouting = [...exports.values()]
      .flat()
      .filter(
        (item) => /[A-Z]{3,}[a-z]/.test(item.name.replace(/openAI|OpenAI/, 'Openai')) && !item.deprecated,
      )
      .map((item) => item.name);
    expect(shouting).toEqual([]);
  });
});
