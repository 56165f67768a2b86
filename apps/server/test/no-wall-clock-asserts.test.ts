/**
 * No test asserts a wall-clock time: the tests run on shared, noisy
 * machines, where any bound on how long something took fails sooner or
 * later. A test that says "this does not wait for that" races it against a
 * sentinel standing for "that" (`settlesBefore` in
 * `packages/runtime/test/support/settles-before.ts`), or compares two times
 * measured alike. Lower bounds stay allowed: a slow machine cannot break them.
 *
 * This scans every test file for an upper bound on a measured time: a clock
 * read (`performance.now() - startedAt`), or a value named like one
 * (`elapsedMs`, `waited`, `duration`, `tookMs`), held under a fixed bound.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SELF = fileURLToPath(import.meta.url);
const ROOT = resolve(SELF, '../../../..');
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', 'dist', '.build', 'coverage']);

/** A clock read, or a start subtracted: `performance.now() - x`, `Date.now()`, `end - sample.startedAt`. */
const CLOCK = /performance\.now\(\)|Date\.now\(\)|getRealSystemTime\(\)|hrtime|-\s*[\w.?!]*started/i;
/**
 * A name that says it holds a measured time, as a word or a part of a camelCase one: `elapsedMs`,
 * `waited`, `durations[0]`, `tookMs`, `totalDuration`, `timeIt(…)`, `roundTripTime` (not `awaited`, `runtime`).
 */
const TIME_NAME =
  /\b(?:elapsed|waited|duration|took)|[a-z\d](?:Elapsed|Waited|Duration|Took)|\btime(?:d|[A-Z]\w*)?\(|[a-z]Time\b/;
/** A count of things (`durations.length`), whatever they are named. */
const COUNT = /\.(?:length|size)\s*$/;
/** A comparison operator, at the start of the text (`=>` is told apart by the character before). */
const COMPARISON = /^(?:<=|>=|<|>)/;

const UPPER_BOUNDS = new Set(['toBeLessThan', 'toBeLessThanOrEqual']);
const LOWER_BOUNDS = new Set(['toBeGreaterThan', 'toBeGreaterThanOrEqual']);
/** Matchers of a boolean, with the value they expect (`toBe` takes it as its argument). */
const TRUTH = new Map<string, boolean | undefined>([
  ['toBe', undefined],
  ['toBeTruthy', true],
  ['toBeFalsy', false],
]);

function isMeasuredTime(expression: string): boolean {
  const text = expression.trim();
  return !COUNT.test(text) && (CLOCK.test(text) || TIME_NAME.test(text));
}

/** The index just past the string literal or bracketed group that starts at `open`. */
function closing(source: string, open: number): number {
  const quote = source[open] as string;
  if (quote === "'" || quote === '"' || quote === '`') {
    let index = open + 1;
    while (index < source.length && source[index] !== quote) index += source[index] === '\\' ? 2 : 1;
    return index + 1;
  }
  let depth = 0;
  for (let index = open; index < source.length; index += 1) {
    const char = source[index] as string;
    if (char === "'" || char === '"' || char === '`') index = closing(source, index) - 1;
    else if (char === '(' || char === '[' || char === '{') depth += 1;
    else if (char === ')' || char === ']' || char === '}') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return source.length;
}

/** Splits `expression` at its top-level occurrences of `separator` (a comma, a comparison), kept in between. */
function topLevel(expression: string, separator: RegExp): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let index = 0; index < expression.length; index += 1) {
    if ('([{\'"`'.includes(expression[index] as string)) {
      index = closing(expression, index) - 1;
      continue;
    }
    const found = separator.exec(expression.slice(index))?.[0];
    if (found === undefined || (found === '>' && expression[index - 1] === '=')) continue;
    parts.push(expression.slice(start, index), found);
    index += found.length - 1;
    start = index + 1;
  }
  parts.push(expression.slice(start));
  return parts;
}

/** Whether `[subject, operator, bound]` holds a measured time under a bound that is not one. */
function isUpperBound(subject: string, operator: string, bound: string): boolean {
  if (operator.startsWith('<')) return isMeasuredTime(subject) && !isMeasuredTime(bound);
  return isMeasuredTime(bound) && !isMeasuredTime(subject);
}

/** The lines of `source` whose assertion holds a measured time under a fixed bound. */
export function wallClockAsserts(source: string): number[] {
  const lines: number[] = [];
  for (const match of source.matchAll(/\bexpect(?:\.soft)?\(/g)) {
    const open = (match.index as number) + match[0].length - 1;
    const end = closing(source, open);
    const subject = topLevel(source.slice(open + 1, end - 1), /^,/)[0] as string;
    const matcher = /^\s*(\.not)?\s*\.(\w+)\(/.exec(source.slice(end));
    if (!matcher) continue;
    const [call, not, name] = matcher as unknown as [string, string | undefined, string];
    const argumentOpen = end + call.length - 1;
    const argument = source.slice(argumentOpen + 1, closing(source, argumentOpen) - 1);
    let flagged = false;
    if (UPPER_BOUNDS.has(name)) flagged = isUpperBound(subject, not ? '>' : '<', argument);
    else if (LOWER_BOUNDS.has(name)) flagged = isUpperBound(subject, not ? '<' : '>', argument);
    else if (TRUTH.has(name)) {
      const expected = TRUTH.get(name) ?? argument.trim() === 'true';
      const [left, operator, right] = topLevel(subject, COMPARISON);
      if (operator !== undefined && right !== undefined) {
        const holds = expected !== Boolean(not);
        const flipped = operator.startsWith('<') ? '>' : '<';
        flagged = isUpperBound(left as string, holds ? operator : flipped, right);
      }
    }
    if (flagged) lines.push(source.slice(0, match.index).split('\n').length);
  }
  return lines;
}

function testFiles(directory: string, inTest = false): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      return SKIPPED_DIRECTORIES.has(entry.name) ? [] : testFiles(path, inTest || entry.name === 'test');
    }
    return inTest && entry.name.endsWith('.ts') && path !== SELF ? [path] : [];
  });
}

describe('no test asserts a wall-clock time', () => {
  it('finds an upper bound on a measured time, and leaves counts, sizes, lower bounds and orders alone', () => {
    const flagged = [
      'expect(performance.now() - answeredAt).toBeLessThan(1000);',
      'expect(Date.now() - started).toBeLessThan(2_000);',
      'expect(vi.getRealSystemTime() - realStart).toBeLessThan(5_000);',
      'expect(waitedMs).toBeLessThan(LEASE.ttlMs / 4);',
      'expect(answer.elapsedMs).toBeLessThan(STALL_ANSWER_MS);',
      'for (const duration of durations) expect(duration).toBeLessThan(1_500);',
      "expect(await timeUnavailable(() => sessions.exists('s1'), silent.port)).toBeLessThan(1_500);",
      'expect(performance.now()).toBeLessThan(deadline);',
      'expect(expiresAt).toBeGreaterThan(Date.now());',
      'expect(\n  performance.now() - startedAt,\n  "prompt",\n).toBeLessThanOrEqual(4_000);',
      'expect(sample.endedAt - sample.startedAt).toBeLessThan(3_000);',
      'expect(2_000).toBeGreaterThan(elapsed);',
      'expect(elapsed).not.toBeGreaterThan(2_000);',
      'expect(elapsed < 1_000).toBe(true);',
      'expect(elapsed >= 1_000).toBe(false);',
      'expect.soft(process.hrtime.bigint() - start).toBeLessThan(10n);',
      'expect(totalDuration).toBeLessThanOrEqual(100);',
      'expect(roundTripTime, "a message (with parentheses)").toBeLessThan(50);',
    ];
    for (const line of flagged) expect(wallClockAsserts(line), line).toEqual([1]);

    const allowed = [
      'expect(waited).toBeGreaterThanOrEqual(180);',
      'expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);',
      'expect(Date.parse(approval.expiresAt!)).toBeLessThanOrEqual(after + DAY_MS);',
      'expect(ttlMs).toBeLessThan(1_000);',
      'expect(config.timeoutMs).toBeLessThan(60_000);',
      'expect(durations.length).toBeLessThan(5);',
      'expect(kept.length).toBeLessThan(400);',
      'expect(bytes).toBeLessThan(eventBytes + 1_000);',
      'expect(sent).toBeLessThan(4 * 1024 * 1024);',
      'expect(ttl).toBeLessThanOrEqual(60_000);',
      'expect(maps.runs[0]!.startedAt).toBeLessThan(weather.runs[0]!.endedAt!);',
      'expect(later.stats?.a?.p50Ms).toBeLessThan(stats?.b?.p50Ms as number);',
      'expect(waitedMs).toBeLessThan(otherWaitedMs);',
      'expect(slowdownOnHostileInput(calculate, inputs, "what is 2 + 3?")).toBeLessThan(1_000);',
      'expect(new SessionBusyError({ sessionId: "s", waitedMs: 500 }).message).toContain("waited 500 ms");',
      'expect(durations?.histogram?.dataPoints.map((point) => Number(point.count))).toEqual([3]);',
      'expect(elapsed >= 250).toBe(true);',
      'expect(await Promise.race([settled, awaitedLate])).toBeLessThan(limit);',
      'expect(runtime.version).toBeLessThan(3);',
      "expect(reply.length < 3, 'took (too) long?').toBe(true);",
      'expect(items.some((item) => item.startedAt > 0)).toBe(true);',
      'expect(items.filter((item) => item.size > 3).length < 2).toBe(true);',
    ];
    for (const line of allowed) expect(wallClockAsserts(line), line).toEqual([]);
  });

  it('in any test file of the repository', () => {
    const files = testFiles(ROOT);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) =>
      wallClockAsserts(readFileSync(file, 'utf8')).map((line) => `${relative(ROOT, file)}:${line}`),
    );
    expect(found, 'an upper bound on wall-clock time: race against a sentinel instead').toEqual([]);
  });
});
