import { describe, expect, it } from 'vitest';
import { AgentAbort } from '../../src/engine/agent-abort.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('an agent call racing its abort', () => {
  it('settles like the reply while not aborted, for each reply or chunk in turn', async () => {
    const abort = new AgentAbort();
    await expect(abort.race(Promise.resolve('first'))).resolves.toBe('first');
    await expect(abort.race(Promise.reject(new Error('agent failed')))).rejects.toThrow('agent failed');
    await expect(abort.race(Promise.resolve('third'))).resolves.toBe('third');
  });

  it('rejects with the reason as soon as it is aborted, and the reply arriving later changes nothing', async () => {
    const abort = new AgentAbort();
    await abort.race(Promise.resolve('an earlier chunk'));
    const reply = deferred<string>();
    const racing = abort.race(reply.promise);
    const reason = new Error('timed out');
    abort.abort(reason);
    await expect(racing).rejects.toBe(reason);
    reply.reject(new Error('late failure'));
    await expect(abort.race(Promise.resolve('too late'))).rejects.toBe(reason);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(reason);
  });
});
