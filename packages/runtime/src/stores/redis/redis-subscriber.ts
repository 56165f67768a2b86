import type { Cluster, Redis } from 'ioredis';
import { isCluster } from './redis-connection.js';

/** What a {@link subscribeChannel} subscription calls. */
export interface ChannelListeners {
  /** Every message published on the channel. */
  message(text: string): void;
  /** The subscription is confirmed again after a disconnection: whatever was published meanwhile was missed. */
  resubscribed?(): void;
}

/** A channel subscription on its own connection; `close` ends it. */
export interface ChannelSubscription {
  close(): void;
}

const ignore = (): void => {};

/**
 * Subscribes to `channel` on a connection of its own, duplicated from
 * `client`, and subscribes again after every reconnection.
 *
 * On a single Redis this subscribes on every `ready` itself instead of
 * leaving it to ioredis's `autoResubscribe`, which sends the `SUBSCRIBE`
 * without handling its failure: a connection closed before the reply (an app
 * closing just as Redis came back) ended in an unhandled rejection. It also
 * calls `resubscribed` only once Redis has confirmed the subscription, so a
 * change published between the reconnection and the confirmation is not
 * missed. A Cluster's own subscriber keeps its subscriptions by itself.
 */
export function subscribeChannel(
  client: Redis,
  channel: string,
  listeners: ChannelListeners,
): ChannelSubscription {
  if (isCluster(client)) return clusterSubscription(client as unknown as Cluster, channel, listeners);
  const subscriber = client.duplicate({ lazyConnect: true, autoResubscribe: false });
  subscriber.on('error', ignore);
  subscriber.on('message', (from: string, text: string) => {
    if (from === channel) listeners.message(text);
  });
  let subscribedBefore = false;
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(() => {
      if (subscribedBefore) listeners.resubscribed?.();
      subscribedBefore = true;
    }, ignore);
  });
  subscriber.connect().catch(ignore);
  return { close: () => subscriber.disconnect() };
}

function clusterSubscription(
  cluster: Cluster,
  channel: string,
  listeners: ChannelListeners,
): ChannelSubscription {
  const subscriber = cluster.duplicate();
  subscriber.on('error', ignore);
  subscriber.on('message', (from: string, text: string) => {
    if (from === channel) listeners.message(text);
  });
  let readyBefore = false;
  subscriber.on('ready', () => {
    if (readyBefore) listeners.resubscribed?.();
    readyBefore = true;
  });
  subscriber.subscribe(channel).catch(ignore);
  return { close: () => subscriber.disconnect() };
}
