import { routeToUser, toolCall } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { parseDataset } from '../../src/eval/dataset-parse.js';
import { diffReports } from '../../src/eval/eval-diff.js';
import { expectRouting, RoutingScoreError } from '../../src/eval/expect-routing.js';
import { runEval } from '../../src/eval/run-eval.js';
import { AGENTS, KnownRouter } from './eval-fixtures.js';

const dataset = await parseDataset(
  [
    { id: 'time', input: 'what time is it', expect: { agent: 'clock' } },
    { id: 'sum', input: 'sum 2 and 2', expect: { agent: 'calculator' } },
    { id: 'weather', input: 'weather today', expect: { agent: 'weather' } },
    { id: 'hello', input: 'hello', expect: { agent: null } },
  ]
    .map((item) => JSON.stringify(item))
    .join('\n'),
  { source: 'small.jsonl' },
);

/** KnownRouter with weather fixed and sums broken: a new version to compare. */
class NextRouter extends KnownRouter {
  protected override handleMessage(conversation: Parameters<KnownRouter['decide']>[0]) {
    const text = conversation.messages[conversation.turnStart]?.content ?? '';
    if (conversation.hop > 0) return routeToUser('done');
    if (text.includes('weather')) return toolCall('weather', text, { reason: 'matched weather' });
    if (text.includes('sum')) return toolCall('clock', text, { reason: 'sums are times now' });
    return super.handleMessage(conversation);
  }
}

describe('diffReports', async () => {
  const baseline = await runEval({ orchestrator: KnownRouter, agents: AGENTS }, dataset);
  const candidate = await runEval({ orchestrator: NextRouter, agents: AGENTS }, dataset);

  it('lists the cases that flipped each way, with their decisions', () => {
    const diff = diffReports(baseline, candidate);
    expect(diff.broke).toEqual([
      {
        id: 'sum',
        message: 'sum 2 and 2',
        before: 'calculator',
        after: 'clock',
        failures: ['first decision: expected calculator, got clock'],
      },
    ]);
    expect(diff.fixed.map((flip) => [flip.id, flip.before, flip.after])).toEqual([
      ['weather', 'calculator', 'weather'],
    ]);
    expect(diff.deltas.accuracy).toBe(0);
  });

  it("reports each agent's score changes, largest F1 drop first", () => {
    const { agents } = diffReports(baseline, candidate);
    // calculator: was P 1/2 R 1 (weather went there too), now never chosen.
    expect(agents[0]).toMatchObject({ agent: 'calculator', precision: -0.5, recall: -1 });
    expect(agents.map((change) => change.agent).sort()).toEqual(['calculator', 'clock', 'weather']);
    expect(agents.find((change) => change.agent === 'weather')).toMatchObject({
      precision: 1,
      recall: 1,
      f1: 1,
    });
  });

  it('flags a metric that dropped by more than the allowed drop, and only then', () => {
    const worse = {
      ...candidate,
      results: candidate.results.map((result) => ({ ...result, passed: false })),
    };
    worse.metrics = { ...candidate.metrics, accuracy: 0.5 };
    expect(diffReports(baseline, worse, { maxDrop: 0.2 }).regressions).toEqual([
      { metric: 'accuracy', drop: 0.25 },
    ]);
    expect(diffReports(baseline, worse, { maxDrop: 0.25 }).regressions).toEqual([]);
    expect(diffReports(baseline, candidate, { maxDrop: 0 }).regressions).toEqual([]);
    expect(diffReports(baseline, candidate).regressions).toBeUndefined();
  });

  it('names the cases of one report only', () => {
    const fewer = { ...candidate, results: candidate.results.slice(1) };
    expect(diffReports(baseline, fewer)).toMatchObject({ onlyInBaseline: ['time'], onlyInCandidate: [] });
  });
});

describe('expectRouting', () => {
  it('resolves with the report when every threshold is met', async () => {
    const report = await expectRouting({ orchestrator: KnownRouter, agents: AGENTS }, dataset).toScoreAtLeast(
      {
        accuracy: 0.75,
        routing: 0.75,
      },
    );
    expect([report.metrics.accuracy, report.stubAgents]).toEqual([0.75, true]);
  });

  it('fails with the metrics below and the worst cases, readably', async () => {
    const failure = await expectRouting({ orchestrator: KnownRouter, agents: AGENTS, name: 'desk' }, dataset)
      .toScoreAtLeast({ accuracy: 0.9 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RoutingScoreError);
    expect((failure as Error).message).toBe(
      [
        "Routing of 'desk' on dataset 'small' scored below the threshold:",
        '  accuracy 75.0% < 90.0%',
        '  (3 of 4 cases passed)',
        'Worst cases (1 of 1 failed):',
        '- weather (small.jsonl:3): "weather today"',
        '    first decision: expected weather, got calculator',
        '    reason: weather looks like numbers',
      ].join('\n'),
    );
    expect((failure as RoutingScoreError).report.metrics.failed).toBe(1);
  });
});
