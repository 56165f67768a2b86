import { CorruptRecordError, type MessageItem } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { RedisSessionStore } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { turnRecord, userMessage } from './session-store.contract.js';

/** Opens a turn with `content` (recorded as already finished, so the next one opens too) and returns its window. */
async function openWindow(store: RedisSessionStore, sessionId: string, content: string, limit: number) {
  const asked = userMessage(content) as Extract<MessageItem, { role: 'user' }>;
  const opened = await store.openTurn(sessionId, asked, { turn: turnRecord(asked.id), limit });
  if (opened.kind !== 'opened') throw new Error(`expected the turn to open, got ${opened.kind}`);
  return opened.messages;
}

const redis = useRedis();

const contents = (messages: readonly MessageItem[]) => messages.map((message) => message.content);

/** Two stores on separate connections under one prefix, as two replicas would be. */
function twoReplicas(): {
  a: RedisSessionStore;
  b: RedisSessionStore;
  prefix: string;
  close(): Promise<void>;
} {
  const prefix = redis.prefix();
  const a = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix });
  const b = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix });
  return { a, b, prefix, close: async () => void (await Promise.all([a.close(), b.close()])) };
}

describe('RedisSessionStore windows', () => {
  it("shows another replica's appends, rewrites and deletions in the next window", async () => {
    const { a, b, prefix, close } = twoReplicas();
    try {
      expect(contents(await openWindow(a, 's1', 'one', 3))).toEqual(['one']);
      await b.append('s1', [userMessage('two')]);
      expect(contents(await openWindow(a, 's1', 'three', 3))).toEqual(['one', 'two', 'three']);

      // A record rewritten in place, keeping its length: the window shows the new text.
      const key = `${prefix}session:{s1}:messages`;
      const record = (await redis.admin.lindex(key, 1)) ?? '';
      await redis.admin.lset(key, 1, record.replace('"two"', '"TWO"'));
      expect(contents(await openWindow(a, 's1', 'four', 3))).toEqual(['TWO', 'three', 'four']);

      // Deleted and written again elsewhere: nothing of the old conversation comes back.
      await b.delete('s1');
      await b.append('s1', [userMessage('three'), userMessage('four')]);
      expect(contents(await openWindow(a, 's1', 'five', 3))).toEqual(['three', 'four', 'five']);
    } finally {
      await close();
    }
  });

  it('reads records that other software wrote as pretty-printed JSON', async () => {
    const { a, prefix, close } = twoReplicas();
    try {
      await openWindow(a, 's1', 'mine', 5);
      const theirs = { ...userMessage('theirs'), metadata: { from: 'a script' } };
      await redis.admin.rpush(
        `${prefix}session:{s1}:messages`,
        JSON.stringify({ v: 1, message: theirs }, null, 2),
      );
      const window = await openWindow(a, 's1', 'mine again', 5);
      expect(contents(window)).toEqual(['mine', 'theirs', 'mine again']);
      expect(window[1]).toEqual(theirs);
    } finally {
      await close();
    }
  });

  it('reports a corrupt record in a window as CorruptRecordError naming the key and position', async () => {
    const { a, prefix, close } = twoReplicas();
    try {
      await openWindow(a, 's1', 'fine', 5);
      const key = `${prefix}session:{s1}:messages`;
      await redis.admin.rpush(key, '{"v":1,"message":{"role":"user"}}');
      const error = await openWindow(a, 's1', 'next', 5).catch((caught: unknown) => caught);
      expect(CorruptRecordError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(`'${key} (item 2 of 3 read)' is corrupt`);
      // The window past the corrupt record reads fine again (the failed open stored its message).
      expect(contents(await openWindow(a, 's1', 'last', 2))).toEqual(['next', 'last']);
    } finally {
      await close();
    }
  });
});
