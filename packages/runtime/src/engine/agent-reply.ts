import type { AgentReply, AgentReplyWithMetadata } from '../agents/agent-contract.js';
import { isPromiseLike } from '../promise-like.js';
import type { AgentAbort } from './agent-abort.js';
import type { TurnControl } from './turn-control.js';

function isAsyncIterable(value: unknown): value is AsyncIterable<string> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * Waits for a pending reply or a stream, raced against the call's abort (its
 * timeout, and the turn being stopped or abandoned while the agent runs).
 */
export async function settle(
  reply: Exclude<AgentReply, string> | PromiseLike<AgentReply>,
  abort: AgentAbort,
  control: TurnControl,
  onDelta: ((delta: string) => void) | undefined,
): Promise<AgentReplyWithMetadata> {
  control.track(abort);
  try {
    const settled = isPromiseLike<AgentReply>(reply) ? await abort.race(reply) : reply;
    if (typeof settled === 'string') return { content: settled };
    return await collect(settled, abort, onDelta);
  } finally {
    control.untrack(abort);
  }
}

async function collect(
  reply: Exclude<AgentReply, string>,
  abort: AgentAbort,
  onDelta: ((delta: string) => void) | undefined,
): Promise<AgentReplyWithMetadata> {
  if (!isAsyncIterable(reply)) {
    if (typeof reply?.content !== 'string')
      throw new TypeError('run() must return a string, { content }, or an async iterable of strings');
    return reply;
  }
  const iterator = reply[Symbol.asyncIterator]();
  let content = '';
  try {
    for (;;) {
      const next = await abort.race(iterator.next());
      if (next.done) {
        // A generator may return `{ metadata }` (e.g. token usage) to keep on the stored message.
        const metadata = (next.value as Partial<AgentReplyWithMetadata> | undefined)?.metadata;
        return metadata && typeof metadata === 'object' ? { content, metadata } : { content };
      }
      const delta = String(next.value);
      content += delta;
      onDelta?.(delta);
    }
  } catch (error) {
    void iterator.return?.()?.catch(() => undefined);
    throw error;
  }
}
