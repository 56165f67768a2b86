import { describe, expect, it } from 'vitest';
import { DatasetError, parseDataset } from '../../src/eval/dataset-parse.js';

/** The issues of the DatasetError that parsing `text` throws. */
async function issuesOf(text: string, format?: 'jsonl' | 'yaml'): Promise<readonly string[]> {
  const error = await parseDataset(text, { format, source: 'cases' }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(DatasetError);
  return (error as DatasetError).issues;
}

describe('a JSONL dataset', () => {
  it('reads one case a line, skipping blank and // lines, ids defaulting to the line', async () => {
    const dataset = await parseDataset(
      [
        '// routing cases',
        '{"input":"what time is it?","expect":{"agent":"clock"},"tags":["time"]}',
        '',
        '{"id":"oos","input":"tell me a joke","expect":{"agent":null,"status":"completed"}}',
      ].join('\n'),
      { source: 'evals/routing.jsonl' },
    );
    expect(dataset.name).toBe('routing');
    expect(dataset.cases).toEqual([
      {
        id: 'case-2',
        input: 'what time is it?',
        expect: { agent: 'clock' },
        tags: ['time'],
        source: 'evals/routing.jsonl:2',
      },
      {
        id: 'oos',
        input: 'tell me a joke',
        expect: { agent: null, status: 'completed' },
        source: 'evals/routing.jsonl:4',
      },
    ]);
  });

  it('reports every bad line with its number and the field at fault', async () => {
    const issues = await issuesOf(
      [
        '{"input":"fine","expect":{"agent":"clock"}}',
        '{"input":"no expectation","expect":{}}',
        '{"input":"x","expect":{"agent":"clock"}',
        '',
        '{"input":"","expect":{"status":"done"},"extra":1}',
        '{"input":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}],"expect":{"agent":"a"}}',
        '{"input":"fine","expect":{"trajectoryMatch":"set"}}',
      ].join('\n'),
    );
    expect(issues).toEqual([
      'cases:2: expect: expect needs at least one expectation',
      expect.stringMatching(/^cases:3: not JSON \(/),
      'cases:5: input: Too small: expected string to have >=1 characters',
      expect.stringMatching(/^cases:5: expect\.status: Invalid option/),
      'cases:5: Unrecognized key: "extra"',
      'cases:6: input: the last message must be the user’s',
      'cases:7: expect: trajectoryMatch needs a trajectory',
    ]);
  });

  it('refuses duplicate ids and an empty file', async () => {
    expect(
      await issuesOf(
        '{"id":"a","input":"x","expect":{"agent":"b"}}\n{"id":"a","input":"y","expect":{"agent":"b"}}',
      ),
    ).toEqual(["cases:2: id: 'a' is also the id at line 1"]);
    expect(await issuesOf('\n\n')).toEqual(['cases:1: the dataset has no cases']);
  });
});

describe('a YAML dataset', () => {
  it('reads a list of cases, or a map with a cases list', async () => {
    const list = await parseDataset(
      [
        '- input: what time is it?',
        '  expect: { agent: clock }',
        '- input: 2 + 2',
        '  expect:',
        '    agent: calculator',
      ].join('\n'),
      { format: 'yaml', source: 'routing.yaml' },
    );
    expect(list.cases.map((item) => [item.id, item.source, item.expect.agent])).toEqual([
      ['case-1', 'routing.yaml:1', 'clock'],
      ['case-2', 'routing.yaml:3', 'calculator'],
    ]);
    const map = await parseDataset('cases:\n  - input: hi\n    expect: { agent: null }\n', {
      format: 'yaml',
    });
    expect(map.cases[0]).toMatchObject({ input: 'hi', expect: { agent: null } });
  });

  it('points at the line of the field at fault, and at YAML syntax errors', async () => {
    const issues = await issuesOf(
      [
        '- input: fine',
        '  expect: { agent: clock }',
        '- input: wrong status',
        '  expect:',
        '    agent: clock',
        '    status: finished',
      ].join('\n'),
      'yaml',
    );
    expect(issues).toEqual([expect.stringMatching(/^cases:6: expect\.status: Invalid option/)]);
    const syntax = await issuesOf('- input: "unclosed\n  expect: {}\n', 'yaml');
    expect(syntax[0]).toMatch(/^cases:\d+: /);
    expect(await issuesOf('input: not a list\n', 'yaml')).toEqual([
      "cases:1: expected a list of cases (or a map with a 'cases' list)",
    ]);
  });
});
