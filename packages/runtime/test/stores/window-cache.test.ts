import { CorruptRecordError, type MessageItem } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../src/stores/redis/records.js';
import { SessionWindowCache } from '../../src/stores/redis/window-cache.js';
import { userMessage } from './session-store.contract.js';

const contents = (messages: readonly MessageItem[]) => messages.map((message) => message.content);
const joined = (messages: readonly MessageItem[]) =>
  messages.map((message) => encodeRecord({ message })).join('\n');

describe('SessionWindowCache', () => {
  it('decodes every window exactly, as the window slides, shrinks, grows and starts over', () => {
    const cache = new SessionWindowCache();
    const log = ['a', 'b', 'c', 'd', 'e', 'f'].map(userMessage);
    const windows: Array<[number, number]> = [
      [0, 2], // first read
      [0, 3], // one appended, window not full yet
      [1, 4], // full window slides by one
      [3, 6], // slides by two
      [5, 6], // shrinks
      [2, 6], // grows backwards
      [2, 6], // unchanged
    ];
    for (const [from, to] of windows) {
      const expected = log.slice(from, to);
      expect(cache.decode('k', joined(expected))).toEqual(expected);
    }
    // The same key now holding another conversation whose last record matches the previous window's last one.
    const other = [userMessage('x'), log[5] as MessageItem];
    expect(contents(cache.decode('k', joined(other)))).toEqual(['x', 'f']);
  });

  it('never takes a record for one that it merely starts', () => {
    const cache = new SessionWindowCache();
    const text = joined([userMessage('a')]);
    cache.decode('k', text);
    expect(() => cache.decode('k', `${text}, "trailing": "garbage"}`)).toThrow(CorruptRecordError);
  });

  it('keeps windows correct while evicting to stay within its size', () => {
    const cache = new SessionWindowCache({ maxChars: 1_000 });
    const sessions = Array.from({ length: 20 }, (_, index) => [userMessage(`s${index}`)]);
    for (let round = 0; round < 3; round += 1) {
      for (const [index, log] of sessions.entries()) {
        log.push(userMessage(`s${index} r${round}`));
        expect(cache.decode(`k${index}`, joined(log.slice(-3)))).toEqual(log.slice(-3));
      }
    }
  });

  it('hands out frozen messages in an array of the caller’s own', () => {
    const cache = new SessionWindowCache();
    const log = [userMessage('a'), { ...userMessage('b'), metadata: { tags: ['x'] } }];
    const first = cache.decode('k', joined(log));
    first.pop();
    expect(Object.isFrozen(first[0])).toBe(true);
    const second = cache.decode('k', joined(log));
    expect(contents(second)).toEqual(['a', 'b']);
    const tags = second[1]?.metadata?.tags;
    expect(tags).toEqual(['x']);
    expect(Object.isFrozen(tags)).toBe(true);
  });

  it('names the key and position of a corrupt record', () => {
    const cache = new SessionWindowCache();
    const text = `${joined([userMessage('a')])}\n{"v":1}`;
    expect(() => cache.decode('k', text)).toThrow(CorruptRecordError);
    expect(() => cache.decode('k', text)).toThrow("'k (item 2 of 2 read)' is corrupt");
  });
});
