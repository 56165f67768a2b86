import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisScript } from '../../src/stores/redis/redis-script.js';
import { useRedis } from '../support/redis.js';

const redis = useRedis();

/**
 * Stands in for a Redis whose script cache can be flushed without touching
 * the shared test Redis (where `SCRIPT FLUSH` would disturb everyone else).
 * The "script" appends its argument to a log, so every execution shows.
 */
function flushableRedis() {
  const loaded = new Set<string>();
  const executions: string[] = [];
  const sha = (lua: string) => createHash('sha1').update(lua).digest('hex');
  const client = {
    stream: {},
    async eval(lua: string, _keys: number, argument: string) {
      loaded.add(sha(lua));
      executions.push(argument);
      return executions.length;
    },
    async evalsha(hash: string, _keys: number, argument: string) {
      if (!loaded.has(hash)) throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      executions.push(argument);
      return executions.length;
    },
  };
  return { client: client as unknown as Redis, executions, flush: () => loaded.clear() };
}

describe('RedisScript', () => {
  it('runs against a real Redis, repeatedly, on one connection', async () => {
    const script = new RedisScript("return redis.call('INCR', KEYS[1])");
    const key = `${redis.prefix()}counter`;
    const results = [];
    for (let index = 0; index < 3; index += 1) results.push(await script.run(redis.admin, [key], []));
    expect(results).toEqual([1, 2, 3]);
  });

  it('runs exactly once per call, even when Redis has forgotten the script', async () => {
    const script = new RedisScript('return ARGV[1]');
    const { client, executions, flush } = flushableRedis();
    expect(await script.run(client, [], ['first'])).toBe(1);
    expect(await script.run(client, [], ['second'])).toBe(2);
    flush();
    expect(await script.run(client, [], ['after a flush'])).toBe(3);
    expect(executions).toEqual(['first', 'second', 'after a flush']);
  });

  it('passes on an error the script raised', async () => {
    const script = new RedisScript("return redis.error_reply('BOOM went the script')");
    // The first call sends the whole script, the second only its hash.
    await expect(script.run(redis.admin, [], [])).rejects.toThrow('BOOM went the script');
    await expect(script.run(redis.admin, [], [])).rejects.toThrow('BOOM went the script');
  });
});
