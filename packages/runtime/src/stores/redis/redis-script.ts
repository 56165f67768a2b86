import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Redis's reply when it does not know a script's hash: the script did not run. */
function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * @internal A Lua script run in one round trip. Redis keeps compiled scripts
 * by their SHA1, so after the first call on a connection only the hash is
 * sent (`EVALSHA`); the first call on each connection sends the whole script
 * (`EVAL`), which also loads it. Should Redis have forgotten the script
 * anyway (after `SCRIPT FLUSH`), the
 * `NOSCRIPT` reply means nothing ran, so the call is safely repeated with
 * `EVAL`: that rare case costs a second round trip.
 */
export class RedisScript {
  readonly #lua: string;
  readonly #sha: string;
  /** The connections (ioredis sockets) that have been sent the whole script. */
  readonly #loaded = new WeakSet<object>();

  constructor(lua: string) {
    this.#lua = lua;
    this.#sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Runs the script with `keys` as KEYS and `args` as ARGV. */
  run(client: Redis, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    const socket: object | undefined = client.stream;
    if (socket === undefined && (client as { isCluster?: boolean }).isCluster) {
      // A Cluster has a connection per node: send the hash, and the script to a node that lacks it.
      return client.evalsha(this.#sha, keys.length, ...keys, ...args).catch((error: unknown) => {
        if (!isNoScriptError(error)) throw error;
        return client.eval(this.#lua, keys.length, ...keys, ...args);
      });
    }
    if (socket === undefined || !this.#loaded.has(socket)) {
      if (socket !== undefined) this.#loaded.add(socket);
      return client.eval(this.#lua, keys.length, ...keys, ...args);
    }
    return client.evalsha(this.#sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!isNoScriptError(error)) throw error;
      this.#loaded.delete(socket);
      return client.eval(this.#lua, keys.length, ...keys, ...args);
    });
  }
}
