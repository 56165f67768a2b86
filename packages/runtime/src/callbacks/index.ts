// The public pieces of callbacks; the app, the routes and the job queue import from here.
export type { CallbackAttemptOutcome } from './callback-attempt.js';
export { type CallbackRefusal, CallbackRefusedError } from './callback-errors.js';
export type { CallbackAttempt, CallbackSenderOptions } from './callback-options.js';
export {
  type CallbackMessage,
  type CallbackResult,
  CallbackSender,
  type CallbackSenderStats,
} from './callback-sender.js';
export {
  CALLBACK_HEADERS,
  type CallbackRequestHeaders,
  type CallbackVerification,
  type CallbackVerificationFailure,
  DEFAULT_CALLBACK_TOLERANCE_SECONDS,
  generateCallbackSecret,
  type VerifyCallbackOptions,
  verifyCallback,
} from './callback-signature.js';
export {
  type CallbackHostLookup,
  type CallbackUrlPolicy,
  MAX_CALLBACK_URL_LENGTH,
  validateCallbackUrl,
} from './callback-url.js';
