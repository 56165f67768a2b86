import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createOtlpReceiver, type OtlpReceiver, type OtlpSpan } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));

/** src/main.ts as a user starts it, with LANGFUSE_* pointing at a loopback receiver. */
describe('the approvals example traces to Langfuse when LANGFUSE_* is set', () => {
  let receiver: OtlpReceiver;
  let child: ChildProcess;
  let spans: OtlpSpan[];
  let turnTraces: string[];
  let output = '';

  beforeAll(async () => {
    receiver = await createOtlpReceiver();
    child = spawn(tsx, ['src/main.ts'], {
      cwd: root,
      env: {
        ...process.env,
        PORT: '0',
        ACCOUNTS_UNDER_REVIEW: 'mallory',
        LANGFUSE_PUBLIC_KEY: 'pk-lf-example',
        LANGFUSE_SECRET_KEY: 'sk-lf-example',
        LANGFUSE_BASE_URL: receiver.url,
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr?.on('data', (chunk) => {
      output += String(chunk);
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (chunk) => {
        output += String(chunk);
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match) resolve(match[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`main.ts exited (${code}): ${output}`)));
    });
    const post = (path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const paused = (await (
      await post('/v1/chat', { message: 'where is order 42?', userId: 'mallory', sessionId: 'review' })
    ).json()) as { status: string; traceId: string; approvals: { id: string }[] };
    expect(paused.status).toBe('awaiting_approval');
    const done = (await (
      await post(`/v1/sessions/review/approvals/${paused.approvals[0]?.id}`, {
        decision: 'approve',
        userId: 'lead-1',
      })
    ).json()) as { status: string; traceId: string };
    expect(done.status).toBe('completed');
    turnTraces = [paused.traceId, done.traceId];
    child.kill('SIGTERM');
    await once(child, 'exit');
    spans = await receiver.waitForSpans(
      (received) => turnTraces.every((traceId) => received.some((span) => span.traceId === traceId)),
      { timeoutMs: 5_000 },
    );
  }, 30_000);
  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await receiver.close();
  });

  it('says tracing is on, and exports both parts of the paused turn', () => {
    expect(output).toContain('Tracing to langfuse');
    expect(receiver.requests[0]?.path).toBe('/api/public/otel/v1/traces');
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set(turnTraces));
  });

  it('keeps both traces the requester’s; the approver is an attribute of the decision', () => {
    expect(new Set(spans.map((span) => span.attributes['user.id']))).toEqual(new Set(['mallory']));
    const resumed = spans.find((span) => span.attributes['switchboard.turn.resumed'] === 'approval');
    expect(resumed?.attributes['switchboard.approval.decided_by']).toBe('lead-1');
  });
});
