import type { Redis } from 'ioredis';
import { between, chance, type Random } from './seeded-random.js';

/** What a {@link FaultyLink} does to the commands it carries. */
export interface LinkFaults {
  /** Each command waits up to this long before it is sent, and its reply as long again before it is delivered. */
  maxDelayMs: number;
  /** The chance that a command is lost on its way (it never runs) or its reply is (it ran). */
  dropRate: number;
}

/** Commands that end or change the connection itself: they pass straight through. */
const UNTOUCHED = new Set(['quit', 'subscribe', 'unsubscribe', 'psubscribe', 'punsubscribe', 'monitor']);

/** The sessions a command touches: the ids in its `session:{id}` keys. */
function sessionsOf(args: readonly unknown[]): string[] {
  const found = new Set<string>();
  for (const arg of args) {
    if (typeof arg !== 'string') continue;
    const match = /session:\{([^}]*)\}:/.exec(arg);
    if (match) found.add(decodeURIComponent(match[1] as string));
  }
  return [...found];
}

/** A command and its reply in a few words: keys by their last part, arguments cut short, scripts unnamed. */
function brief(name: string, args: readonly unknown[], reply: unknown): string {
  const shown = name.startsWith('eval') ? args.slice(2) : args;
  const words = shown.map((arg) => {
    const text = String(arg);
    const key = /^.*session:\{[^}]*\}:(.*)$/.exec(text);
    return key ? `:${key[1]}` : text.slice(0, 12);
  });
  return `${name} ${words.join(' ')} -> ${JSON.stringify(reply)?.slice(0, 40)}`;
}

interface Queued {
  at: number;
  go: () => void;
}

/**
 * A network between one engine and Redis that delays, drops and stalls, as
 * a TCP connection can: commands reach Redis in the order they were sent and
 * replies come back in the order the commands ran (a later command never
 * overtakes an earlier one on the same connection), each after a seeded
 * delay, now and then a long one. A lost command or reply fails its caller
 * as a timeout would. A pause holds everything (the replica stalls; its
 * timers still fire), a kill fails everything from then on (the replica died).
 *
 * `client` is what the engine's store is given: the real ioredis client
 * behind a proxy that routes every command through the link.
 */
export class FaultyLink {
  readonly client: Redis;
  readonly #random: Random;
  readonly #onLoss: (sessionIds: string[]) => void;
  readonly #onRun: ((sessionIds: string[], command: string) => void) | undefined;
  #faults: LinkFaults;
  readonly #sends: Queued[] = [];
  readonly #replies: Queued[] = [];
  #lastSendAt = 0;
  #lastReplyAt = 0;
  #pausedUntil = 0;
  #dead = false;
  #draining = false;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param onLoss - told of the sessions a lost command or reply touched.
   * @param onRun - told of each command that ran in Redis, in a few words (for traces).
   */
  constructor(
    real: Redis,
    random: Random,
    faults: LinkFaults,
    onLoss: (sessionIds: string[]) => void,
    onRun?: (sessionIds: string[], command: string) => void,
  ) {
    this.#random = random;
    this.#faults = faults;
    this.#onLoss = onLoss;
    this.#onRun = onRun;
    const commands = new Set(real.getBuiltinCommands());
    this.client = new Proxy(real, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== 'function') return value;
        const name = String(property);
        if (commands.has(name) && !UNTOUCHED.has(name)) {
          return (...args: unknown[]) => this.#carry(name, args, () => value.apply(target, args));
        }
        return value.bind(target);
      },
    });
  }

  /** Changes the faults from now on (a calm network: no loss, short delays). */
  set faults(faults: LinkFaults) {
    this.#faults = faults;
  }

  /** Holds every command and reply for `ms` (a stalled replica, a network hiccup). */
  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + ms);
    this.#schedule();
  }

  /** Fails every waiting and later command (the replica died; what already reached Redis stays done). */
  kill(): void {
    this.#dead = true;
    clearTimeout(this.#timer);
    for (const queued of [...this.#sends.splice(0), ...this.#replies.splice(0)]) queued.go();
  }

  #carry(name: string, args: unknown[], send: () => Promise<unknown>): Promise<unknown> {
    const { maxDelayMs, dropRate } = this.#faults;
    const lost = chance(this.#random, dropRate) ? (chance(this.#random, 0.5) ? 'command' : 'reply') : '';
    // Now and then a command is much slower (a retransmit, a busy server), holding up those behind it.
    const tail = chance(this.#random, 0.03) ? between(this.#random, 20, 120) : 0;
    const sendDelay = between(this.#random, 0, maxDelayMs) + tail;
    const replyDelay = between(this.#random, 0, maxDelayMs);
    const noticedAfterMs = between(this.#random, 5, 40);
    return new Promise((resolve, reject) => {
      const fail = (message: string) => reject(new Error(message));
      const timeOut = () => {
        this.#onLoss(sessionsOf(args));
        // What the caller notices of a lost command or reply: its deadline passing.
        setTimeout(() => fail('Command timed out'), noticedAfterMs);
      };
      const deliver = (settle: () => void) => {
        this.#lastReplyAt = Math.max(this.#lastReplyAt, Date.now() + replyDelay);
        this.#enqueue(this.#replies, this.#lastReplyAt, () => {
          if (this.#dead) fail('Connection is closed.');
          else if (lost === 'reply') timeOut();
          else settle();
        });
      };
      if (this.#dead) return fail('Connection is closed.');
      this.#lastSendAt = Math.max(this.#lastSendAt, Date.now() + sendDelay);
      this.#enqueue(this.#sends, this.#lastSendAt, () => {
        if (this.#dead) return fail('Connection is closed.');
        if (lost === 'command') return timeOut();
        send().then(
          (value) => {
            this.#onRun?.(sessionsOf(args), brief(name, args, value));
            deliver(() => resolve(value));
          },
          (error: unknown) => deliver(() => reject(error)),
        );
      });
    });
  }

  #enqueue(queue: Queued[], at: number, go: () => void): void {
    if (this.#dead) {
      go();
      return;
    }
    queue.push({ at, go });
    if (!this.#draining) this.#schedule();
  }

  /** Runs what is due, in order, and sets the timer for the next. */
  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#dead) return;
    const now = Date.now();
    if (now >= this.#pausedUntil) {
      this.#draining = true;
      try {
        for (const queue of [this.#sends, this.#replies]) {
          while (queue.length > 0 && (queue[0] as Queued).at <= now) (queue.shift() as Queued).go();
        }
      } finally {
        this.#draining = false;
      }
    }
    const next = Math.min(this.#sends[0]?.at ?? Infinity, this.#replies[0]?.at ?? Infinity);
    if (next === Infinity) return;
    this.#timer = setTimeout(() => this.#schedule(), Math.max(next, this.#pausedUntil) - now);
  }
}
