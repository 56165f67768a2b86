import { describe, expect, it } from 'vitest';
import {
  estimateMessageTokens,
  estimateRequestTokens,
  estimateTokens,
  TRUNCATION_NOTE,
  truncateToTokens,
} from '../src/agents/llm-token-estimate.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('the token estimate', () => {
  it('counts a token per 4 characters of Latin text and code, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('Hello, world!')).toBe(4);
    expect(estimateTokens('x'.repeat(400))).toBe(100);
    expect(estimateTokens('{"a":1,"b":[2,3]}')).toBe(5);
  });

  it('counts a token per character for scripts that tokenizers split finely (CJK, emoji)', () => {
    expect(estimateTokens('你好世界')).toBe(4);
    expect(estimateTokens('ok 你好')).toBe(3);
    expect(estimateTokens('🙂')).toBe(2);
  });

  it('adds 4 tokens per message and 3 per request, and counts tool calls and tool definitions', () => {
    expect(estimateMessageTokens({ role: 'user', content: 'Hello, world!' })).toBe(8);
    const call = { id: 'c1', type: 'function' as const, function: { name: 'add', arguments: '{"a":1}' } };
    expect(estimateMessageTokens({ role: 'assistant', content: null, tool_calls: [call] })).toBe(
      4 + estimateTokens(JSON.stringify([call])),
    );
    const tool = { type: 'function' as const, function: { name: 'add', parameters: { type: 'object' } } };
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Hello, world!' },
    ];
    expect(estimateRequestTokens({ messages })).toBe(3 + 7 + 8);
    expect(estimateRequestTokens({ messages, tools: [tool] })).toBe(
      3 + 7 + 8 + estimateTokens(JSON.stringify([tool])),
    );
  });

  it('cuts a text to a token limit with a note, and leaves a text that fits alone', () => {
    expect(truncateToTokens('short', 10)).toBe('short');
    const long = 'word '.repeat(1_000);
    const cut = truncateToTokens(long, 100);
    expect(cut.endsWith(TRUNCATION_NOTE)).toBe(true);
    expect(long.startsWith(cut.slice(0, -TRUNCATION_NOTE.length))).toBe(true);
    expect(estimateTokens(cut)).toBeLessThanOrEqual(100);
    expect(estimateTokens(cut)).toBeGreaterThan(90);
  });

  it('stays within any limit for any mix of scripts, never splitting a character', () => {
    const pieces = ['a', 'word ', '你', '🙂', 'é', '\n'];
    let seed = 7;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    for (let round = 0; round < 200; round++) {
      const text = Array.from(
        { length: Math.floor(random() * 400) },
        () => pieces[Math.floor(random() * pieces.length)],
      ).join('');
      const limit = 20 + Math.floor(random() * 80);
      const cut = truncateToTokens(text, limit);
      expect(estimateTokens(cut)).toBeLessThanOrEqual(limit);
      expect(LONE_SURROGATE.test(cut)).toBe(false);
    }
  });
});
