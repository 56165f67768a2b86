/**
 * @internal How the Redis stores read Redis's error replies. An error reply
 * means the command did not run: Redis checks a command before it runs it,
 * and a script meets the out-of-memory check at its first write that would
 * grow memory, before which it has written nothing (a script that already
 * wrote is let through, so that it never stops half-way).
 * @module
 */

/** Replies that mean "not serving right now" rather than "your command is wrong". */
const NOT_SERVING = /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY|OOM|MISCONF|NOREPLICAS)\b/;

/** Replies that refuse writes until an operator or time fixes Redis: out of memory, a failing disk, a replica, too few replicas. */
const REFUSED_WRITE = /^(OOM|MISCONF|READONLY|NOREPLICAS)\b/;

/** The most a readiness probe writes to find out whether a refused write would now be accepted. */
const MAX_PROBE_BYTES = 256 * 1024;

/** An ioredis reply error, which carries the command it answered (arguments included: message text). */
interface ReplyErrorLike extends Error {
  command?: { name?: string; args?: unknown[] };
}

/** True for Redis's reply to a command it did not run because it is not serving (or not taking writes) right now. */
export function isNotServingReply(error: Error): boolean {
  return error.name === 'ReplyError' && NOT_SERVING.test(error.message);
}

/** True for Redis's reply to a write it refused (see {@link REFUSED_WRITE}). */
export function isRefusedWriteReply(error: Error): boolean {
  return error.name === 'ReplyError' && REFUSED_WRITE.test(error.message);
}

/** The first sentence of a reply, without the script's hash and line that Redis appends. */
export function replyReason(error: Error): string {
  return error.message.replace(/\.?\s*script: .*$/s, '');
}

/**
 * How many bytes of arguments the refused command carried (bounded): a
 * probe of that size meets Redis's memory check as the command did, since
 * Redis counts a command's own arguments in the memory it checks.
 */
export function probeSizeOf(error: Error): number {
  const args = (error as ReplyErrorLike).command?.args ?? [];
  let bytes = 0;
  for (const arg of args) {
    if (typeof arg === 'string') bytes += Buffer.byteLength(arg);
    else if (Buffer.isBuffer(arg)) bytes += arg.length;
    else if (typeof arg === 'number') bytes += 8;
  }
  return Math.min(bytes, MAX_PROBE_BYTES);
}

/**
 * Drops the command's arguments from an ioredis reply error (they hold
 * message and answer text, which must never reach a log), keeping its name
 * and how many arguments it had. Returns the same error.
 */
export function withoutArguments<T>(error: T): T {
  const command = (error as ReplyErrorLike | undefined)?.command;
  if (command && Array.isArray(command.args)) {
    (error as ReplyErrorLike).command = { name: command.name, args: [`(${command.args.length} arguments)`] };
  }
  return error;
}
