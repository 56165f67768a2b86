import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

interface RecordedSpan {
  name: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
}

const fixture = fileURLToPath(new URL('./fixtures/decorated-orchestrator.ts', import.meta.url));
const root = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * The `@observe()` syntax as users write it. It runs under tsx, which lowers
 * standard decorators; Vite 8's Oxc transform (used by Vitest 4) leaves them
 * to the runtime, and Node 20 cannot parse them.
 */
describe('@observe on an orchestrator method', () => {
  let output: { reply: string; traceId: string; spans: RecordedSpan[] };
  const one = (name: string): RecordedSpan => {
    const found = output.spans.filter((span) => span.name === name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', fixture], {
      cwd: root,
      timeout: 20_000,
    });
    output = JSON.parse(stdout);
  });

  it('nests the decorated method called in handleMessage under the decision span', () => {
    expect(output.reply).toBe('It is noon');
    const select = one('select-agent');
    const route0 = one('route 0');
    expect(select.scope).toBe('switchboard.observe');
    expect(select.parentSpanId).toBe(route0.spanId);
    expect(select.traceId).toBe(output.traceId);
    expect(select.attributes).toMatchObject({
      'langfuse.observation.input': '"what time is it"',
      'langfuse.observation.output': '"clock"',
      'session.id': 'ses_decorated',
      'user.id': 'ada',
    });
    expect(route0.attributes['switchboard.decision.agents']).toEqual(['clock']);
  });

  it('names an unnamed span after the method, keeps `this`, and honours captureInput: false', () => {
    const summarise = one('summarise');
    expect(summarise.parentSpanId).toBe(one('route 1').spanId);
    expect(summarise.attributes).not.toHaveProperty('langfuse.observation.input');
    expect(summarise.attributes['langfuse.observation.output']).toBe('"It is noon"');
  });
});
