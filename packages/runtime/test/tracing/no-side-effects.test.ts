import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const runtimeDirectory = fileURLToPath(new URL('../..', import.meta.url));

// In a fresh process: importing every entry point must leave OpenTelemetry's globals as they were.
const probe = `
import { context, propagation, trace } from '@opentelemetry/api';
await import('@switchboard/core');
await import('@switchboard/runtime');
await import('@switchboard/runtime/otel');
await import('@switchboard/runtime/redis');
const delegate = trace.getTracerProvider().getDelegate().constructor.name;
const span = trace.getTracer('probe').startSpan('probe');
console.log(JSON.stringify({
  delegate,
  recording: span.isRecording(),
  contextManager: context._getContextManager().constructor.name,
  propagatorFields: propagation.fields(),
}));
`;

describe('importing Switchboard', () => {
  it('registers no tracer provider, context manager or propagator', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      cwd: runtimeDirectory,
      env: {
        ...process.env,
        LANGFUSE_PUBLIC_KEY: 'pk',
        LANGFUSE_SECRET_KEY: 'sk',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      },
    });
    const globals = JSON.parse(stdout.trim());
    expect(globals).toMatchObject({
      delegate: 'NoopTracerProvider',
      recording: false,
      contextManager: 'NoopContextManager',
      propagatorFields: [],
    });
  });
});
