import { readFileSync } from 'node:fs';
import type {
  AgentMeta,
  AgentStats,
  AgentStatsTable,
  AssistantMessage,
  ConfigVersion,
  ConfigView,
  Conversation,
  ConversationStep,
  Decision,
  ErrorKind,
  ErrorMessage,
  JsonValue,
  Memory,
  MemoryResult,
  MemoryScope,
  MessageItem,
  Orchestrator,
  OrchestratorOptions,
  ReportsAgentStats,
  RequestContextInit,
  SessionBusyErrorOptions,
  SetContentOptions,
  StepAnnotations,
  StepRecorder,
  StoreOutcome,
  StrategyProfile,
  SwitchboardErrorOptions,
  TokenUsage,
  ToolCall,
  ToolCallOptions,
  ToolMessage,
  TurnLimits,
  UserMessage,
} from '@switchboard/core';
import * as core from '@switchboard/core';
import { describe, expect, it } from 'vitest';

/** The names the barrel exports as types only (`type X` inside `export { … }`, or `export type { … }`). */
function typeOnlyExports(source: string): string[] {
  const names: string[] = [];
  for (const [, typeBlock, list] of source.matchAll(/export (type )?\{([^}]*)\}/g)) {
    for (const item of (list ?? '').split(',').map((part) => part.trim())) {
      if (!item) continue;
      const isType = Boolean(typeBlock) || item.startsWith('type ');
      const name = item
        .replace(/^type /, '')
        .split(' as ')
        .at(-1)
        ?.trim();
      if (isType && name) names.push(name);
    }
  }
  return names.sort();
}

/**
 * The documented runtime API of `@switchboard/core`, sorted. Adding or
 * removing an export is an API change: update this list on purpose.
 */
const RUNTIME_EXPORTS = [
  'AbstractOrchestrator',
  'AgentError',
  'AgentMetaSchema',
  'AgentStoppedError',
  'AgentTimeoutError',
  'ApprovalExpiredError',
  'ApprovalPendingError',
  'ApprovalResolvedError',
  'AssistantMessageSchema',
  'BUILT_IN_PROFILES',
  'CallDepthExceededError',
  'ConfigurationError',
  'ContextMissingError',
  'CorruptRecordError',
  'EMPTY_CONFIG',
  'ErrorMessageSchema',
  'FanOutNotAllowedError',
  'GuardrailBlockedError',
  'IdempotencyKeyReusedError',
  'InvalidDecisionError',
  'MaxHopsExceededError',
  'MessageItemSchema',
  'NotFoundError',
  'OrchestratorError',
  'PendingApprovalsLimitError',
  'ROUTE_TO_USER',
  'RequestContext',
  'SEED_PROFILE',
  'ServerShutdownError',
  'SessionBusyError',
  'StoreUnavailableError',
  'SwitchboardError',
  'SystemError',
  'ToolCallSchema',
  'ToolMessageSchema',
  'TurnAbandonedError',
  'TurnDeadlineError',
  'TurnInterruptedError',
  'TurnNotActiveError',
  'UnknownAgentError',
  'UserError',
  'UserMessageSchema',
  'ValidationError',
  'annotateStep',
  'createId',
  'createSecretId',
  'currentUserMessage',
  'discardStreamedAnswer',
  'isErrorMessage',
  'isRouteToUser',
  'lastMessage',
  'latestToolResults',
  'rankByStats',
  'recordStep',
  'recordUsage',
  'reportsAgentStats',
  'routeToUser',
  'streamAnswer',
  'toolCall',
  'turnMessages',
  'useProfile',
];

/** Module-private helpers that must never become part of the API. */
const INTERNALS = [
  'validateAgents',
  'checkCall',
  'isAllowed',
  'invalid',
  'MARKER',
  'STORAGE_KEY',
  'storage',
  'holder',
  'metadata',
  // Shared with the runtime through `@switchboard/core/internal`, not for applications.
  'describeError',
  'traceContextSlot',
  'validateDecision',
];

/**
 * Every documented type, checked by the type checker: removing or renaming
 * one of these exports breaks `pnpm typecheck`.
 */
export type DocumentedTypes = [
  AgentMeta,
  AgentStats,
  AgentStatsTable,
  AssistantMessage,
  ConfigVersion,
  ConfigView,
  Conversation,
  ConversationStep,
  Decision,
  ErrorKind,
  ErrorMessage,
  JsonValue,
  Memory,
  MemoryResult<unknown>,
  MemoryScope,
  MessageItem,
  Orchestrator,
  OrchestratorOptions,
  ReportsAgentStats,
  RequestContextInit,
  SessionBusyErrorOptions,
  SetContentOptions,
  StepAnnotations,
  StepRecorder,
  StoreOutcome,
  StrategyProfile,
  SwitchboardErrorOptions,
  TokenUsage,
  ToolCall,
  ToolCallOptions,
  ToolMessage,
  TurnLimits,
  UserMessage,
];

/** The names of {@link DocumentedTypes}, sorted: the barrel must export exactly these as types. */
const DOCUMENTED_TYPE_NAMES = [
  'AgentMeta',
  'AgentStats',
  'AgentStatsTable',
  'AssistantMessage',
  'ConfigVersion',
  'ConfigView',
  'Conversation',
  'ConversationStep',
  'Decision',
  'ErrorKind',
  'ErrorMessage',
  'JsonValue',
  'Memory',
  'MemoryResult',
  'MemoryScope',
  'MessageItem',
  'Orchestrator',
  'OrchestratorOptions',
  'ReportsAgentStats',
  'RequestContextInit',
  'SessionBusyErrorOptions',
  'SetContentOptions',
  'StepAnnotations',
  'StepRecorder',
  'StoreOutcome',
  'StrategyProfile',
  'SwitchboardErrorOptions',
  'TokenUsage',
  'ToolCall',
  'ToolCallOptions',
  'ToolMessage',
  'TurnLimits',
  'UserMessage',
];

// Internal types stay internal: each line fails the type check if the name becomes an export.
// @ts-expect-error `Holder` is private to context.ts
export type NoHolder = import('@switchboard/core').Holder;
// @ts-expect-error `validateAgents` is private to orchestrator.ts
export type NoValidateAgents = typeof import('@switchboard/core').validateAgents;
// @ts-expect-error `MARKER` is private to errors/switchboard-error.ts
export type NoMarker = typeof import('@switchboard/core').MARKER;

describe('@switchboard/core public API', () => {
  it('exports exactly the documented runtime values', () => {
    expect(Object.keys(core).sort()).toEqual(RUNTIME_EXPORTS);
  });

  it('exports exactly the documented types', () => {
    const source = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/export \*/);
    expect(typeOnlyExports(source)).toEqual(DOCUMENTED_TYPE_NAMES);
  });

  it('does not export internal helpers or markers', () => {
    const exported = new Set(Object.keys(core));
    expect(INTERNALS.filter((name) => exported.has(name))).toEqual([]);
    expect(Object.getOwnPropertySymbols(core).map(String)).toEqual(['Symbol(Symbol.toStringTag)']);
  });

  it('exports types as types only: they leave no runtime value behind', () => {
    expect(DOCUMENTED_TYPE_NAMES.filter((name) => name in core)).toEqual([]);
  });

  it('offers no deep imports into its source files', async () => {
    const deepPath = '@switchboard/core/src/orchestrator.ts';
    await expect(import(/* @vite-ignore */ deepPath)).rejects.toThrow(/not exported/);
  });

  it('exports error classes that all share the Switchboard base', () => {
    const errorClasses = Object.entries(core)
      .filter(([name]) => /^[A-Z]\w*Error$/.test(name))
      .map(([, value]) => value);
    expect(errorClasses).toHaveLength(30);
    const notErrors = errorClasses.filter(
      (errorClass) =>
        errorClass !== core.SwitchboardError &&
        !((errorClass as { prototype: unknown }).prototype instanceof core.SwitchboardError),
    );
    expect(notErrors).toEqual([]);
  });
});
