import { ApprovalPendingError, ApprovalResolvedError, NotFoundError } from '@switchboard/core';
import type { Redis } from 'ioredis';
import { type Agent, defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { RedisSessionStore } from '../../src/redis.js';
import { createRedisClient } from '../../src/stores/redis/redis-connection.js';
import { createApp, relay, sleep } from '../support/app-fixtures.js';
import { REDIS_URL } from '../support/redis.js';
import { FaultyLink, type LinkFaults } from './faulty-link.js';
import { Ledger, type LedgerTiming } from './ledger.js';
import { between, chance, fork, type Random } from './seeded-random.js';

/** A replica: an app with its own connection to Redis, through a faulty link. */
interface Replica {
  id: number;
  app: App;
  link: FaultyLink;
  real: Redis;
}

/** The settings every simulated replica runs with. */
export interface WorldSettings extends LedgerTiming {
  sessionWaitMs: number;
  faults: LinkFaults;
  /** Keep a trace of each session's commands and requests for its violations. */
  tracing?: boolean;
}

/**
 * Replicas of one app on one Redis, and the clients that talk to them: each
 * client sends its session's messages to a replica it picks, retries with
 * the same idempotency key when it gets no answer, and decides the
 * approvals it is shown (at times twice at once, differently, on two
 * replicas). Everything they were told goes to the {@link Ledger}.
 */
export class World {
  readonly ledger: Ledger;
  readonly replicas: Replica[] = [];
  readonly #retired: Replica[] = [];
  readonly #settings: WorldSettings;
  readonly #random: Random;
  readonly #agents: Agent[];
  #started = 0;

  constructor(random: Random, admin: Redis, prefix: string, replicas: number, settings: WorldSettings) {
    this.#random = random;
    this.#settings = settings;
    this.ledger = new Ledger(admin, prefix, settings, settings.tracing);
    const { gatedRuns } = this.ledger;
    this.#agents = [
      defineAgent({
        name: 'work',
        description: 'Works for the milliseconds its message starts with',
        async run(message, { signal }) {
          const [ms = '0', tag = ''] = message.split(' ');
          await sleep(Number(ms), signal);
          return `done ${tag}`;
        },
      }),
      defineAgent({
        name: 'gated',
        description: 'Acts once a person approved',
        requiresApproval: true,
        run(message, { toolCall }) {
          gatedRuns.add(toolCall.id);
          return `granted ${message}`;
        },
      }),
    ];
    for (let index = 0; index < replicas; index += 1) this.replicas.push(this.#startReplica());
  }

  /** Kills the replica in `slot` (its turns in flight fail; their leases stay until they expire) and starts another. */
  kill(slot: number): void {
    const replica = this.replicas[slot] as Replica;
    replica.link.kill();
    this.#noteEverywhere(`r${replica.id} killed`);
    for (const sessionId of this.ledger.sessionsOn(replica.id)) this.ledger.fault(sessionId);
    this.#retired.push(replica);
    this.replicas[slot] = this.#startReplica();
  }

  /** From now on, no loss and short delays (the network healed). */
  calm(): void {
    for (const replica of this.replicas) replica.link.faults = { maxDelayMs: 2, dropRate: 0 };
  }

  /** Sends one message until some replica answers it (at most `attempts` times), deciding approvals on the way. */
  async deliver(sessionId: string, text: string, random: Random, attempts = 5): Promise<void> {
    const entry = this.ledger.send(sessionId, text);
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      const replica = this.#pickReplica(random);
      const operation = this.ledger.start(sessionId, replica.id);
      try {
        const result = await replica.app.chat({ sessionId, message: text, idempotencyKey: `key-${text}` });
        this.ledger.end(operation);
        entry.acknowledged = result;
        const pending = (result.approvals ?? []).map((approval) => approval.id);
        if (pending.length > 0) await this.decide(sessionId, pending, random);
        return;
      } catch (error) {
        this.ledger.end(operation, error);
        if (ApprovalPendingError.isInstance(error)) {
          await this.decide(sessionId, (error as ApprovalPendingError).approvalIds, random);
        } else await sleep(between(random, 5, 60));
      }
    }
  }

  /** Decides each approval, at times twice at once on two replicas (one approving, one rejecting). */
  async decide(sessionId: string, approvalIds: readonly string[], random: Random, depth = 0): Promise<void> {
    for (const approvalId of approvalIds) {
      const decision: 'approve' | 'reject' = chance(random, 0.6) ? 'approve' : 'reject';
      const rival: 'approve' | 'reject' = decision === 'approve' ? 'reject' : 'approve';
      const decisions = chance(random, 0.25) ? [decision, rival] : [decision];
      await Promise.all(
        decisions.map((each) => this.#resolve(sessionId, approvalId, each, fork(random), depth)),
      );
    }
  }

  /** Plays the session's client: `count` messages, each after the answer to the previous, some sent twice at once. */
  async converse(sessionId: string, random: Random, count: number): Promise<void> {
    const beside: Promise<void>[] = [];
    for (let index = 0; index < count; index += 1) {
      if (chance(random, 0.15))
        beside.push(this.deliver(sessionId, this.#compose(random, `${sessionId}-${index}b`), fork(random)));
      await this.deliver(sessionId, this.#compose(random, `${sessionId}-${index}`), fork(random));
      await sleep(between(random, 0, 30));
    }
    await Promise.all(beside);
  }

  /** Pauses and kills replicas at random until `done()`. */
  async disturb(random: Random, { kills, pauses }: { kills: number; pauses: boolean }, done: () => boolean) {
    while (!done()) {
      await sleep(between(random, 50, 300));
      if (done()) return;
      const slot = between(random, 0, this.replicas.length - 1);
      if (kills > 0 && chance(random, 0.3)) {
        kills -= 1;
        this.kill(slot);
      } else if (pauses && chance(random, 0.5)) {
        const { id, link } = this.replicas[slot] as Replica;
        const ms = between(random, 30, 1_200);
        link.pause(ms);
        this.#noteEverywhere(`r${id} stalls for ${ms} ms`);
      }
    }
  }

  /** Closes every replica, the killed ones included. */
  async close(): Promise<void> {
    const all = [...this.#retired, ...this.replicas.splice(0)];
    this.#retired.length = 0;
    await Promise.all(
      all.map(async ({ app, link, real }) => {
        await app.close();
        link.kill();
        real.disconnect();
      }),
    );
  }

  async #resolve(
    sessionId: string,
    approvalId: string,
    decision: 'approve' | 'reject',
    random: Random,
    depth: number,
  ): Promise<void> {
    const asks = this.ledger.approval(approvalId);
    asks.asked.add(decision);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const replica = this.#pickReplica(random);
      const operation = this.ledger.start(sessionId, replica.id);
      try {
        const result = await replica.app.resolveApproval({ sessionId, approvalId, decision });
        this.ledger.end(operation);
        asks.acknowledged.push(decision === 'approve' ? 'approved' : 'rejected');
        const pending = (result.approvals ?? []).map((approval) => approval.id);
        if (pending.length > 0 && depth < 2) await this.decide(sessionId, pending, random, depth + 1);
        return;
      } catch (error) {
        this.ledger.end(operation, error);
        if (ApprovalResolvedError.isInstance(error)) return;
        if (NotFoundError.isInstance(error)) {
          this.ledger.violations.push(
            `approval ${approvalId} of session ${sessionId} was shown pending, then not found`,
          );
          return;
        }
        await sleep(between(random, 5, 60));
      }
    }
  }

  /** A message to the slow agent (most) or to the approval-gated one; its text is unique in the run. */
  #compose(random: Random, tag: string): string {
    return chance(random, 0.15) ? `gated: ${tag}` : `work: ${between(random, 0, 60)} ${tag}`;
  }

  #noteEverywhere(what: string): void {
    for (const sessionId of this.ledger.sent.keys()) this.ledger.note(sessionId, what);
  }

  #pickReplica(random: Random): Replica {
    return this.replicas[between(random, 0, this.replicas.length - 1)] as Replica;
  }

  #startReplica(): Replica {
    this.#started += 1;
    const id = this.#started;
    const real = createRedisClient(REDIS_URL);
    real.on('error', () => {});
    const link = new FaultyLink(
      real,
      fork(this.#random),
      this.#settings.faults,
      (sessionIds) => {
        for (const sessionId of sessionIds) this.ledger.fault(sessionId);
      },
      (sessionIds, command) => {
        for (const sessionId of sessionIds) this.ledger.note(sessionId, `r${id} ${command}`);
      },
    );
    const sessionStore = new RedisSessionStore(link.client, { keyPrefix: this.ledger.prefix });
    const { leaseTtlMs, sessionWaitMs } = this.#settings;
    const { app } = createApp({
      agents: this.#agents,
      handler: relay({ defaultAgent: 'work' }),
      sessionStore,
      leaseTtlMs,
      sessionWaitMs,
      closeGraceMs: 100,
    });
    return { id, app, link, real };
  }
}
