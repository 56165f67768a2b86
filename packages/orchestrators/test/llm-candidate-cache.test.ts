import { describe, expect, it } from 'vitest';
import { CandidateCache } from '../src/llm-candidate-cache.js';

const byName = (item: { name: string }) => item.name;

describe('CandidateCache', () => {
  it('builds once per candidate set, whether the same list or an equal one comes back', () => {
    const built: string[][] = [];
    const cache = new CandidateCache((names) => {
      built.push([...names]);
      return { names };
    });
    const agents = [{ name: 'a' }, { name: 'b' }];
    const first = cache.get(agents, byName);
    expect(cache.get(agents, byName)).toBe(first);
    expect(cache.get([{ name: 'a' }, { name: 'b' }], byName)).toBe(first);
    expect(cache.get([{ name: 'b' }], byName)).not.toBe(first);
    expect(built).toEqual([['a', 'b'], ['b']]);
  });

  it('keeps at most `limit` candidate sets, dropping the oldest', () => {
    let builds = 0;
    const cache = new CandidateCache(() => ++builds, 2);
    for (const name of ['a', 'b', 'c']) cache.get([{ name }], byName);
    cache.get([{ name: 'c' }], byName);
    expect(builds).toBe(3);
    cache.get([{ name: 'a' }], byName);
    expect(builds).toBe(4);
  });
});
