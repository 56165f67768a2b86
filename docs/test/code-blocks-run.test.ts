import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScriptedModelServer, type ScriptedModelServer } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../packages/runtime/test/support/redis.js';
import { type CodeBlock, codeBlocks, DOCS } from './code-block-pages.js';
import { type BlockRun, blockEnvironment, runCodeBlock } from './run-code-block.js';

/**
 * Every block of the docs and the README that is a whole program runs as a reader would run it, in a
 * process of its own (`node --import tsx`), and exits 0 printing what the page shows it print. The page
 * marks each block that has imports of its own (see code-block-pages.ts): `<!-- run -->` (or `run: model`,
 * `run: redis`), or `<!-- no-run: why -->`, so that a new complete example either runs here or says why not.
 *
 * `run: model` blocks get `OPENAI_BASE_URL` and `OPENAI_API_KEY` of a scripted model server that answers
 * every call; `run: redis` blocks get `REDIS_URL` and a key prefix of their own in `REDIS_KEY_PREFIX`,
 * whose keys are deleted afterwards.
 */

/** How long a block may run: one that has not exited by then does not end (a server it never closes). */
const RUN_TIMEOUT_MS = 60_000;
/** Blocks run two at a time (the machine has two cores; most wait on a model or Redis). */
const CONCURRENCY = 2;
/** What the stand-in model answers every chat call with. */
const MODEL_REPLY = { content: 'OK', usage: { inputTokens: 12, outputTokens: 3 } };

const blocks = codeBlocks();
const runnable = blocks.filter((block) => block.run !== undefined);
const onRedis = runnable.filter((block) => block.run === 'redis');
const elsewhere = runnable.filter((block) => block.run !== 'redis');

/** Where the blocks are written (under docs/, so that the packages resolve) and where they run. */
let sources = '';
let workDir = '';
beforeAll(() => {
  sources = mkdtempSync(join(DOCS, '.code-block-runs-'));
  workDir = mkdtempSync(join(tmpdir(), 'switchboard-docs-'));
});
afterAll(() => {
  rmSync(sources, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

/** Runs `task`s at most {@link CONCURRENCY} at a time, in the order they came. */
function limited(): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running < CONCURRENCY) running++;
    // Else wait for a slot: a task that ends hands its slot to the next one.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
const limit = limited();
const runs = new Map<CodeBlock, Promise<BlockRun>>();
/** Where each block was written, to name its lines by the page's in what it printed. */
const files = new Map<CodeBlock, string>();

/** Starts the runs of `group` (their tests then wait for them in page order). */
function start(group: readonly CodeBlock[], env: (block: CodeBlock) => Record<string, string>): void {
  for (const block of group) {
    const file = join(sources, `${block.page.replace(/[^\w]+/g, '-')}-${block.index}.ts`);
    files.set(block, file);
    const options = { code: block.code, file, cwd: workDir, env: env(block), timeoutMs: RUN_TIMEOUT_MS };
    const run = () => runCodeBlock(options);
    runs.set(block, limit(run));
  }
}

/** The end of what a block printed, its file's lines named as the page's (`docs/guides/x.md:27`). */
function tail(block: CodeBlock, text: string, lines = 30): string {
  const file = (files.get(block) ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text
    .replace(
      new RegExp(`(?:file://)?${file}:(\\d+)`, 'g'),
      (_, at: string) => `${block.page}:${block.line + Number(at) - 1}`,
    )
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .join('\n');
}

/** Checks that a block's run ended well and printed what its page shows. */
async function expectRuns(block: CodeBlock): Promise<void> {
  const run = await runs.get(block);
  const where = `${block.page}:${block.line}`;
  const printed = `stdout:\n${tail(block, run?.stdout ?? '')}\nstderr:\n${tail(block, run?.stderr ?? '')}`;
  expect(run, `${where} was not started`).toBeDefined();
  expect(
    run?.timedOut,
    `${where} did not exit within ${RUN_TIMEOUT_MS / 1000} s: close what it starts (await app.close()), or mark it <!-- no-run: why -->\n${printed}`,
  ).toBe(false);
  expect(run?.exitCode, `${where} failed\n${printed}`).toBe(0);
  for (const output of block.output)
    expect(run?.stdout, `${where} prints what the page shows\n${printed}`).toContain(output);
}

describe('the docs blocks that are whole programs', () => {
  it('are marked: every block with imports of its own says whether it runs', () => {
    const problems = blocks.flatMap((block) => {
      const where = `${block.page}:${block.line}`;
      const found = [...block.problems];
      if (block.hasImports && block.run === undefined && block.noRun === undefined)
        found.push(
          `${where}: a block with imports of its own needs <!-- run --> (run: model, run: redis) or <!-- no-run: why --> above its fence`,
        );
      if (block.run !== undefined && block.declarations.length > 0)
        found.push(`${where}: a block that runs is a whole program: it cannot rely on declared names`);
      if (
        block.run === 'redis' &&
        block.code.includes('keyPrefix') &&
        !block.code.includes('REDIS_KEY_PREFIX')
      )
        found.push(
          `${where}: a block run on Redis takes its key prefix from REDIS_KEY_PREFIX, so runs share no keys`,
        );
      return found;
    });
    expect(problems).toEqual([]);
    expect(runnable.length).toBeGreaterThan(5);
  });

  describe('run', () => {
    let model: ScriptedModelServer | undefined;
    beforeAll(async () => {
      model = await createScriptedModelServer({ fallback: MODEL_REPLY });
      const modelUrl = model.url;
      start(elsewhere, (block) =>
        blockEnvironment(block.run === 'model' ? { OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: 'test' } : {}),
      );
    });
    afterAll(() => model?.close());

    for (const block of elsewhere)
      it(`${block.page}:${block.line}`, () => expectRuns(block), RUN_TIMEOUT_MS + 30_000);

    if (onRedis.length > 0)
      describe('on Redis', () => {
        const redis = useRedis();
        beforeAll(() =>
          start(onRedis, () => blockEnvironment({ REDIS_URL, REDIS_KEY_PREFIX: redis.prefix() })),
        );

        for (const block of onRedis)
          it(`${block.page}:${block.line}`, () => expectRuns(block), RUN_TIMEOUT_MS + 30_000);
      });
  });
});
