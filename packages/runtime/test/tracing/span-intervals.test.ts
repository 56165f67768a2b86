import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createApp, fanOut, relay, slowAgent } from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';

/** Nanoseconds since the epoch of an OpenTelemetry time. */
const ns = ([seconds, nanos]: [number, number]) => BigInt(seconds) * 1_000_000_000n + BigInt(nanos);

/**
 * The SDK anchors each span's clock to `Date.now()` when it starts, so two
 * spans' times may disagree by up to about a millisecond; a child counts as
 * outside its parent only beyond that.
 */
const CLOCK_SLACK_NS = 2_000_000n;

/** The spans that start before their recorded parent or end after it (beyond the clock slack). */
function outsideTheirParent(
  spans: readonly ReadableSpan[],
  parentOf: (span: ReadableSpan) => ReadableSpan | undefined,
) {
  return spans.flatMap((span) => {
    const parent = parentOf(span);
    if (!parent) return [];
    const early = ns(parent.startTime) - ns(span.startTime);
    const late = ns(span.endTime) - ns(parent.endTime);
    return early > CLOCK_SLACK_NS || late > CLOCK_SLACK_NS
      ? [`${span.name} outside ${parent.name} (starts ${early} ns before, ends ${late} ns after)`]
      : [];
  });
}

describe('span intervals: every child lies inside its parent, as Langfuse needs to nest it', () => {
  const recording = useSpanRecording();

  it('in a multi-hop turn and in a fan-out', async () => {
    const { app } = createApp({ agents: [slowAgent('echo', 5)], handler: relay() });
    await app.chat({ message: 'one' });
    await app.close();
    const fan = createApp({
      agents: [slowAgent('maps', 10), slowAgent('weather', 20)],
      handler: fanOut(['maps', 'weather']),
    }).app;
    await fan.chat({ message: 'hike' });
    await fan.close();

    const { spans, parentOf } = recording();
    const agents = spans.filter((span) => span.name.startsWith('agent '));
    expect(agents.map((span) => span.name).sort()).toEqual(['agent echo', 'agent maps', 'agent weather']);
    // Each agent call hangs under the decision that made it.
    for (const agent of agents) expect(parentOf(agent)?.name).toMatch(/^route \d+$/);
    expect(outsideTheirParent(spans, parentOf)).toEqual([]);
    // The decision's own time stays visible beside its span's.
    const decisions = spans.filter((span) => span.name.startsWith('route '));
    expect(
      decisions.every((span) => typeof span.attributes['switchboard.decision.duration_ms'] === 'number'),
    ).toBe(true);
  });
});
