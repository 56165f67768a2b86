import { type Conversation, type MessageItem, RequestContext } from '@switchboard/core';
import { z } from 'zod';
import type { GraphState } from './graph-types.js';

/**
 * What a graph keeps in session memory between turns, versioned: its final
 * state (when it carries state), or the input node it waits at with the
 * state then and the id of the question's answer. Read back with
 * {@link readCarried}, never trusted.
 */
const CarriedSchema = z.object({
  v: z.literal(1),
  turnId: z.string(),
  state: z.record(z.string(), z.unknown()),
  waiting: z.string().optional(),
  /** The `toolCallId` of the answer that asked: the wait counts only while that is the session's last answer. */
  askId: z.string().optional(),
});

/** A graph's carried state, as stored. */
export type Carried = z.infer<typeof CarriedSchema>;

/** The session-memory key of graph `name`. */
export function carriedKey(name: string): string {
  return `graph:${name}`;
}

/** What graph `name` carried into this turn, or undefined (none, malformed, or no request context). */
export async function readCarried(name: string): Promise<Carried | undefined> {
  const memory = RequestContext.tryCurrent()?.getMemory('session');
  if (!memory) return undefined;
  const read = await memory.getContent(carriedKey(name));
  if (!read.success) return undefined;
  const parsed = CarriedSchema.safeParse(read.data);
  return parsed.success ? parsed.data : undefined;
}

/** Keeps what graph `name` carries to the next turn; false when it could not be written. */
export async function writeCarried(name: string, carried: Carried): Promise<boolean> {
  const memory = RequestContext.tryCurrent()?.getMemory('session');
  if (!memory) return false;
  const written = await memory.setContent(carriedKey(name), carried);
  return written.success;
}

/** True when the session's last answer before this turn is the question `askId` asked. */
export function answersQuestion(conversation: Conversation, askId: string | undefined): boolean {
  if (askId === undefined) return false;
  for (let index = conversation.turnStart - 1; index >= 0; index -= 1) {
    const message = conversation.messages[index] as MessageItem;
    if (message.role === 'assistant') return message.toolCallId === askId;
  }
  return false;
}

/** The state as carried, typed. */
export function carriedState(carried: Carried | undefined): GraphState | undefined {
  return carried?.state as GraphState | undefined;
}
