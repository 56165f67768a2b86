import { describe, expect, it } from 'vitest';
import { App } from '../../src/app.js';
import { parseDataset } from '../../src/eval/dataset-parse.js';
import { quantile } from '../../src/eval/eval-metrics.js';
import { runEval } from '../../src/eval/run-eval.js';
import { AGENTS, KnownRouter, target } from './eval-fixtures.js';

const lines = (cases: object[]) => cases.map((item) => JSON.stringify(item)).join('\n');

// Eight routing cases whose outcome under KnownRouter is worked out by hand in the comments.
const ROUTING = [
  { id: 'r1', input: 'what time is it', expect: { agent: 'clock' } }, // clock ✓
  { id: 'r2', input: 'time please', expect: { agent: 'clock' } }, // clock ✓
  { id: 'r3', input: 'sum 2 and 2', expect: { agent: 'calculator' } }, // calculator ✓
  { id: 'r4', input: 'weather today', expect: { agent: 'weather' } }, // calculator ✗
  { id: 'r5', input: 'hello there', expect: { agent: null } }, // (no agent) ✓
  { id: 'r6', input: 'sum of time zones', expect: { agent: 'calculator' } }, // clock ✗
  { id: 'r7', input: 'explode', expect: { agent: 'clock' } }, // (error) ✗
  { id: 'r8', input: 'is it rainy', expect: { agent: 'weather' } }, // (no agent) ✗
];
// Trajectories: the chain calls clock then calculator.
const PATHS = [
  { id: 't1', input: 'chain', expect: { trajectory: ['clock', 'calculator'] } }, // exact ✓ in-order ✓
  { id: 't2', input: 'chain', expect: { trajectory: ['calculator'], trajectoryMatch: 'in-order' } }, // exact ✗ in-order ✓
  { id: 't3', input: 'chain', expect: { trajectory: ['calculator', 'clock'], trajectoryMatch: 'set' } }, // exact ✗ in-order ✗
];
const ANSWERS = [
  { id: 'a1', input: 'time now', expect: { status: 'completed', contains: 'NOON' } }, // ✓
  { id: 'a2', input: 'time now', expect: { contains: ['noon', 'midnight'] } }, // ✗
];

describe('runEval on a hand-computed set', async () => {
  const dataset = await parseDataset(lines([...ROUTING, ...PATHS, ...ANSWERS]), { source: 'known.jsonl' });
  const report = await runEval(target(), dataset);
  const { metrics } = report;

  it('counts the cases whose every expectation held', () => {
    expect(report.results.filter((result) => result.passed).map((result) => result.id)).toEqual([
      'r1',
      'r2',
      'r3',
      'r5',
      't1',
      't2',
      't3',
      'a1',
    ]);
    expect(metrics).toMatchObject({ cases: 13, passed: 8, failed: 5, accuracy: 8 / 13 });
    expect(metrics.routing).toEqual({ cases: 8, correct: 4, accuracy: 0.5 });
  });

  it('builds the confusion matrix of first decisions, with "no agent" and errors', () => {
    expect(metrics.confusion.labels).toEqual(['calculator', 'clock', 'weather', '(no agent)', '(error)']);
    // Rows: expected; columns: decided.
    expect(metrics.confusion.matrix).toEqual([
      [1, 1, 0, 0, 0], // calculator: r3 right, r6 went to clock
      [0, 2, 0, 0, 1], // clock: r1, r2 right, r7 errored
      [1, 0, 0, 1, 0], // weather: r4 went to calculator, r8 got no agent
      [0, 0, 0, 1, 0], // (no agent): r5 right
      [0, 0, 0, 0, 0], // (error): never expected
    ]);
  });

  it('scores each agent', () => {
    const { perAgent } = metrics;
    expect(perAgent.calculator).toEqual({ precision: 0.5, recall: 0.5, f1: 0.5, support: 2 });
    expect(perAgent.clock).toMatchObject({ precision: 2 / 3, recall: 2 / 3, support: 3 });
    expect(perAgent.clock?.f1).toBeCloseTo(2 / 3, 10);
    expect(perAgent.weather).toEqual({ precision: 0, recall: 0, f1: 0, support: 2 });
    expect(perAgent['(no agent)']).toMatchObject({ precision: 0.5, recall: 1, support: 1 });
    expect(perAgent['(no agent)']?.f1).toBeCloseTo(2 / 3, 10);
    expect(perAgent['(error)']).toEqual({ precision: 0, recall: 0, f1: 0, support: 0 });
  });

  it('rates trajectories exactly and in order', () => {
    expect(metrics.trajectory).toEqual({ cases: 3, exactMatch: 1 / 3, inOrder: 2 / 3 });
    expect(report.results.find((result) => result.id === 't3')?.trajectory).toEqual(['clock', 'calculator']);
  });

  it('lists a failed case with its decision, candidates, thought and reason', () => {
    const r6 = report.results.find((result) => result.id === 'r6');
    expect(r6).toMatchObject({
      passed: false,
      source: 'known.jsonl:6',
      failures: ['first decision: expected calculator, got clock'],
      first: { kind: 'call', agents: ['clock'], reason: 'matched time', thought: 'time wins over sum' },
      candidates: ['clock', 'calculator', 'weather', 'slow'],
    });
    expect(report.results.find((result) => result.id === 'a2')?.failures).toEqual([
      'answer: expected to contain "midnight"',
    ]);
    expect(report.results.find((result) => result.id === 'r1')?.candidates).toBeUndefined();
  });

  it('adds up tokens per case and latency quantiles', () => {
    // Two decisions (clock, then the answer) of 3 + 1 tokens; the chain makes three.
    expect(report.results.find((result) => result.id === 'r1')?.tokens).toEqual({ input: 6, output: 2 });
    expect(report.results.find((result) => result.id === 't1')?.tokens).toEqual({ input: 9, output: 3 });
    const input = report.results.reduce((sum, result) => sum + (result.tokens?.input ?? 0), 0);
    expect(metrics.tokens.input).toBe(input);
    expect(metrics.tokens.perCase).toBeCloseTo((input + input / 3) / 13, 10);
    expect(metrics.latencyMs.p50).toBeLessThanOrEqual(metrics.latencyMs.p95);
    expect(metrics.latencyMs.p95).toBeLessThanOrEqual(metrics.latencyMs.max);
  });
});

describe('runEval', () => {
  it('takes quantiles by nearest rank', () => {
    const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect([quantile(values, 0.5), quantile(values, 0.95), quantile([], 0.5)]).toEqual([5, 10, 0]);
  });

  it('scores a fan-out as a set and feeds a conversation so far to the router', async () => {
    const dataset = await parseDataset(
      lines([
        { id: 'f', input: 'both please', expect: { agent: ['calculator', 'clock'] } },
        {
          id: 'c',
          input: [
            { role: 'user', content: 'what time is it' },
            { role: 'assistant', content: 'noon' },
            { role: 'user', content: 'again' },
          ],
          expect: { agent: 'clock' },
        },
      ]),
    );
    const report = await runEval(target(), dataset);
    expect(report.results.map((result) => [result.id, result.first.label, result.passed])).toEqual([
      ['f', 'calculator+clock', true],
      ['c', 'clock', true],
    ]);
    expect(report.metrics.perAgent.clock).toMatchObject({ precision: 1, recall: 1, support: 2 });
  });

  it('stubs every agent with one that answers its own name', async () => {
    const dataset = await parseDataset(lines([{ input: 'what time', expect: { contains: 'noon' } }]));
    const real = await runEval(target(), dataset);
    const stubbed = await runEval(target(), dataset, { stubAgents: true });
    expect([real.results[0]?.reply, stubbed.results[0]?.reply]).toEqual(['the clock says noon', 'clock']);
    expect([real.stubAgents, stubbed.stubAgents]).toEqual([false, true]);
  });

  it('gives the same results in dataset order at any concurrency', async () => {
    const again = ROUTING.map(({ id, ...rest }) => ({ ...rest, id: `${id}-again` }));
    const dataset = await parseDataset(lines([...ROUTING, ...PATHS, ...ANSWERS, ...again]));
    const strip = (report: Awaited<ReturnType<typeof runEval>>) =>
      report.results.map(({ latencyMs: _latency, ...rest }) => rest);
    const serial = await runEval(target(), dataset);
    const parallel = await runEval(target(), dataset, { concurrency: 4 });
    expect(strip(parallel)).toEqual(strip(serial));
    expect({ ...parallel.metrics, latencyMs: 0 }).toEqual({ ...serial.metrics, latencyMs: 0 });
  });

  it('cancels a case that outlives its timeout and goes on with the next', async () => {
    const dataset = await parseDataset(
      lines([
        { id: 'stuck', input: 'slow one', expect: { agent: 'slow' } },
        { id: 'next', input: 'time', expect: { agent: 'clock' } },
      ]),
    );
    const progress: string[] = [];
    const report = await runEval(target(), dataset, {
      timeoutMs: 100,
      onProgress: (done, total, result) => progress.push(`${done}/${total} ${result.id}`),
    });
    expect(report.results[0]).toMatchObject({ status: 'timeout', passed: false });
    expect(report.results[0]?.failures[0]).toBe('timed out after 100 ms');
    expect(report.results[1]).toMatchObject({ status: 'completed', passed: true });
    expect(report.metrics.timeouts).toBe(1);
    expect(progress).toEqual(['1/2 stuck', '2/2 next']);
  });

  it("evaluates a mounted app's orchestrator without closing the app's agents", async () => {
    let closed = 0;
    const agents = AGENTS.map((agent) => ({
      ...agent,
      close: async () => {
        closed += 1;
      },
    }));
    const app = new App({ name: 'mine', agents, logLevel: 'silent' }).mount(KnownRouter);
    const dataset = await parseDataset(lines([{ input: 'sum it', expect: { agent: 'calculator' } }]));
    const report = await runEval(app, dataset);
    expect([report.orchestrator, report.metrics.accuracy, closed]).toEqual(['mine', 1, 0]);
    await app.close();
    expect(closed).toBe(AGENTS.length);
  });
});
