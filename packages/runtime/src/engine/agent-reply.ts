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
 * Written with `then` rather than as an async function: on Node 20 every
 * promise runs the `AsyncLocalStorage` hook, and each `await` makes one more,
 * so a reply that is a pending string or `{ content }` takes three promises
 * here (the race's two and this one) where an async function took four.
 */
export function settle(
  reply: Exclude<AgentReply, string> | PromiseLike<AgentReply>,
  abort: AgentAbort,
  control: TurnControl,
  onDelta: ((delta: string) => void) | undefined,
): Promise<AgentReplyWithMetadata> {
  control.track(abort);
  const failed = (error: unknown): never => {
    control.untrack(abort);
    throw error;
  };
  const settled = (value: AgentReply): AgentReplyWithMetadata | Promise<AgentReplyWithMetadata> => {
    if (isAsyncIterable(value)) {
      return collect(value, abort, onDelta).then((collected) => {
        control.untrack(abort);
        return collected;
      }, failed);
    }
    try {
      return typeof value === 'string' ? { content: value } : contentOf(value);
    } finally {
      control.untrack(abort);
    }
  };
  if (!isPromiseLike<AgentReply>(reply)) {
    try {
      return Promise.resolve(settled(reply));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return abort.race(reply).then(settled, failed);
}

/** A reply that is neither a string nor a stream: `{ content }`, with its metadata if any. */
function contentOf(reply: Exclude<AgentReply, string>): AgentReplyWithMetadata {
  if (typeof (reply as Partial<AgentReplyWithMetadata> | undefined)?.content !== 'string')
    throw new TypeError('run() must return a string, { content }, or an async iterable of strings');
  return reply as AgentReplyWithMetadata;
}

/** Reads a streamed reply to its end, each chunk raced against the call's abort and passed to `onDelta`. */
async function collect(
  reply: AsyncIterable<string>,
  abort: AgentAbort,
  onDelta: ((delta: string) => void) | undefined,
): Promise<AgentReplyWithMetadata> {
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
