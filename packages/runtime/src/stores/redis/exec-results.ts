import type { ChainableCommander } from 'ioredis';

/**
 * Sends a pipeline or MULTI transaction (one round trip) and returns its
 * replies, throwing the first command error so that it reaches the caller
 * like the error of a single command would.
 */
export async function execResults(batch: ChainableCommander): Promise<unknown[]> {
  const replies = await batch.exec();
  if (replies === null) throw new Error('The Redis transaction was aborted');
  return replies.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}
