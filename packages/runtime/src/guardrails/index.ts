/**
 * Guardrails: the contract (`Guardrail`, `GuardVerdict`, `ConversationReview`)
 * and two ready-made ones, `piiRedactor` and `blockedPatterns`.
 * @module
 */
export {
  BLOCKED_PATTERN_RULES,
  type BlockedPatternRule,
  type BlockedPatternsOptions,
  blockedPatterns,
} from './blocked-patterns.js';
export type {
  ConversationReview,
  GuardCheck,
  GuardContext,
  Guardrail,
  GuardStage,
  GuardVerdict,
  ReviewVerdict,
} from './guardrail.js';
export {
  PII_KINDS,
  type PiiKind,
  type PiiPlaceholder,
  type PiiRedaction,
  type PiiRedactorOptions,
  piiRedactor,
  redactPii,
} from './pii-redactor.js';
