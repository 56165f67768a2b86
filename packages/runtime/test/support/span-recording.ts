import { afterAll, afterEach, beforeAll } from 'vitest';
import { recordSpans, type SpanRecording } from '../../src/testing/span-recorder.js';

/**
 * Records spans for the tests of the enclosing `describe` (registered in
 * `beforeAll`, so tests outside it run untraced), cleared after each test and
 * shut down after the last. Returns an accessor for the recording.
 */
export function useSpanRecording(): () => SpanRecording {
  let recording: SpanRecording | undefined;
  beforeAll(() => {
    recording = recordSpans();
  });
  afterEach(() => recording?.reset());
  afterAll(() => recording?.shutdown());
  return () => {
    if (!recording) throw new Error('The span recording starts in beforeAll');
    return recording;
  };
}
