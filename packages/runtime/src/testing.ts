/**
 * `@switchboard/runtime/testing`: test doubles and helpers. Importing it
 * needs the OpenTelemetry SDK packages (`@opentelemetry/sdk-trace-base`,
 * `@opentelemetry/sdk-trace-node`) installed; `createOtlpReceiver` needs
 * `protobufjs` too, to decode protobuf trace exports.
 *
 * @module
 */
export {
  type ConversationRun,
  type RunConversationOptions,
  runConversation,
} from './testing/conversation-runner.js';
export { assertWellFormedHistory, historyProblems } from './testing/history-check.js';
export { captureLogs, type LogCapture, type LogRecord } from './testing/log-capture.js';
export {
  createOtlpReceiver,
  type OtlpReceiver,
  type OtlpReceiverOptions,
  type OtlpRequest,
} from './testing/otlp-receiver.js';
export { flattenOtlpTraces, type OtlpSpan } from './testing/otlp-spans.js';
export { hashedEmbedding, SCRIPTED_EMBEDDING_DIMENSIONS } from './testing/scripted-embeddings.js';
export {
  createScriptedModelServer,
  type ScriptedModelServer,
  type ScriptedModelServerOptions,
} from './testing/scripted-model-server.js';
export type {
  RecordedRequest,
  ScriptEntry,
  ScriptedError,
  ScriptedReply,
  ScriptedToolCall,
  ScriptedUsage,
} from './testing/scripted-script.js';
export { readSessionHistory, type SessionHistory } from './testing/session-history.js';
export { recordSpans, type SpanRecording } from './testing/span-recorder.js';
