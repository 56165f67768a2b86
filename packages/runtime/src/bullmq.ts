/**
 * Background turns on BullMQ (`@switchboard/runtime/bullmq`): the queue
 * every replica takes jobs from, on the Redis they share. Requires the
 * `bullmq` and `ioredis` peer dependencies. Nothing connects on import.
 * @module
 */
export { type BullmqTurnQueueOptions, bullmqTurnQueue } from './background/bullmq-turn-queue.js';
