/**
 * How a `RedisSessionStore` tells every replica sharing its key prefix of a
 * cancel: a pub/sub channel, listened to on a connection of its own opened
 * when the first listener subscribes.
 *
 * @module
 */
import type { RedisConnection } from './redis-connection.js';
import { type ChannelSubscription, subscribeChannel } from './redis-subscriber.js';

/** The channel cancels are published on, under the key prefix. */
const CANCEL_CHANNEL = 'cancels';

/** @internal Publishes cancels on a key prefix's channel and calls this replica's listeners for each. */
export class RedisCancelChannel {
  readonly #connection: RedisConnection;
  readonly #keyPrefix: string;
  readonly #cancelListeners = new Set<(sessionId: string, turnId: string | undefined) => void>();
  #subscription: ChannelSubscription | undefined;

  constructor(connection: RedisConnection, keyPrefix: string) {
    this.#connection = connection;
    this.#keyPrefix = keyPrefix;
  }

  /** Publishes a cancel to every replica listening on this prefix. */
  async publish(sessionId: string, turnId?: string): Promise<void> {
    const message = JSON.stringify({ sessionId, turnId });
    await this.#connection.run('publish a cancel', (client) =>
      client.publish(`${this.#keyPrefix}${CANCEL_CHANNEL}`, message),
    );
  }

  /**
   * Calls `listener` for every cancel published on this prefix, by any
   * replica. The first listener opens a subscriber connection, which
   * subscribes again after a reconnect.
   */
  listen(listener: (sessionId: string, turnId: string | undefined) => void): () => void {
    this.#cancelListeners.add(listener);
    this.#subscription ??= subscribeChannel(this.#connection.client, `${this.#keyPrefix}${CANCEL_CHANNEL}`, {
      message: (text) => {
        const cancel = parseCancel(text);
        if (!cancel) return;
        for (const each of this.#cancelListeners) each(cancel.sessionId, cancel.turnId);
      },
    });
    return () => this.#cancelListeners.delete(listener);
  }

  /** Forgets the listeners and closes the subscriber connection. */
  close(): void {
    this.#cancelListeners.clear();
    this.#subscription?.close();
    this.#subscription = undefined;
  }
}

function parseCancel(text: string): { sessionId: string; turnId?: string } | undefined {
  try {
    const value = JSON.parse(text) as { sessionId?: unknown; turnId?: unknown };
    if (typeof value.sessionId !== 'string') return undefined;
    return {
      sessionId: value.sessionId,
      turnId: typeof value.turnId === 'string' ? value.turnId : undefined,
    };
  } catch {
    return undefined;
  }
}
