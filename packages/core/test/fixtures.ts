import {
  AbstractOrchestrator,
  type AgentMeta,
  type AssistantMessage,
  type Conversation,
  type Decision,
  type ErrorMessage,
  isErrorMessage,
  type MessageItem,
  type ToolMessage,
  type UserMessage,
} from '@switchboard/core';
import { expect } from 'vitest';

/** The agents most tests route between. */
export const AGENTS: readonly AgentMeta[] = [
  { name: 'calculator', description: 'Evaluates arithmetic' },
  { name: 'clock', description: 'Tells the time' },
  { name: 'converter', description: 'Converts units' },
];

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${++counter}`;
const createdAt = '2026-01-01T00:00:00.000Z';

/** A user message with a fresh id. */
export function userMessage(content: string): UserMessage {
  return { id: nextId('msg'), role: 'user', content, createdAt };
}

/** An agent reply with a fresh id. */
export function toolMessage(name: string, content: string, status: 'ok' | 'error' = 'ok'): ToolMessage {
  return { id: nextId('msg'), role: 'tool', name, toolCallId: nextId('call'), content, status, createdAt };
}

/** What `route_to_user` delivered. */
export function assistantMessage(content: string): AssistantMessage {
  return { id: nextId('msg'), role: 'assistant', content, toolCallId: nextId('call'), createdAt };
}

/**
 * A conversation whose current turn starts at `turnStart` (by default the last
 * user message in `messages`).
 */
export function conversationOf(
  messages: readonly MessageItem[],
  {
    agents = AGENTS,
    turnStart,
    hop = 0,
    lastResults,
  }: {
    agents?: readonly AgentMeta[];
    turnStart?: number;
    hop?: number;
    lastResults?: readonly ToolMessage[];
  } = {},
): Conversation {
  const lastUser = messages.map((message) => message.role).lastIndexOf('user');
  return {
    sessionId: 'ses_test',
    turnId: 'turn_test',
    ...(lastResults ? { lastResults } : {}),
    messages,
    turnStart: turnStart ?? lastUser,
    hop,
    agents,
  };
}

/** A conversation with a single user message: the first decision of a turn. */
export function firstHop(content = 'hello', agents: readonly AgentMeta[] = AGENTS): Conversation {
  return conversationOf([userMessage(content)], { agents });
}

/**
 * An orchestrator whose `handleMessage` is the given function, so a test can
 * return (or throw) anything, including values the types forbid.
 */
export class ScriptedOrchestrator extends AbstractOrchestrator {
  readonly seen: Conversation[] = [];
  readonly #script: (conversation: Conversation) => unknown;

  constructor(
    script: (conversation: Conversation) => unknown,
    { name = 'scripted', agents = AGENTS }: { name?: string; agents?: readonly AgentMeta[] } = {},
  ) {
    super({ name, agents });
    this.#script = script;
  }

  protected handleMessage(conversation: Conversation): Decision | Promise<Decision> {
    this.seen.push(conversation);
    return this.#script(conversation) as Decision | Promise<Decision>;
  }
}

/** Resolves after `ms` milliseconds through a real timer. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Asserts that a decision is an `ErrorMessage` and returns its error. */
export function expectError(decision: Decision): Error {
  expect(isErrorMessage(decision)).toBe(true);
  return (decision as ErrorMessage).error;
}

/** Asks a {@link ScriptedOrchestrator} running `script` for one decision. */
export async function decideWith(script: () => unknown, conversation = firstHop()): Promise<Decision> {
  return new ScriptedOrchestrator(script).decide(conversation);
}
