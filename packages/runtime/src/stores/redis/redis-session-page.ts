/**
 * How a `RedisSessionStore` reads a page of a session's history: its
 * messages with one `LRANGE` (with the counts and the last turn, in one
 * script), then its turns with another.
 *
 * @module
 */
import type { TurnRecord } from '../../turns/turn-record.js';
import { finishPage, pageRange, pageTurnRange } from '../history-page.js';
import type { HistoryPage, ReadPageOptions } from '../session-store.js';
import { READ_PAGE } from './lua-scripts.js';
import { decodeMessages, decodeTurn, decodeTurns } from './records.js';
import type { RedisConnection } from './redis-connection.js';
import type { SessionKeys } from './redis-keys.js';

/** @internal A page of the session under `keys`: see `RedisSessionStore.readPage`. */
export async function readSessionPage(
  connection: RedisConnection,
  keys: SessionKeys,
  options: ReadPageOptions,
): Promise<HistoryPage> {
  const limit = Math.max(1, Math.floor(options.limit));
  const [total, turnCount, lastRaw, raws] = (await connection.run('read a page of a session', (client) =>
    READ_PAGE.run(client, [keys.messages, keys.turns], [limit, options.before?.message ?? '']),
  )) as [number, number, string, string[]];
  const { start, lastTurn: lastIndex } = pageRange(total, turnCount, { ...options, limit });
  const messages = decodeMessages(keys.messages, raws);
  const lastTurn = lastRaw === '' ? undefined : decodeTurn(`${keys.turns} (last)`, lastRaw);
  const { first, last } = pageTurnRange(messages, lastIndex);
  let candidates: TurnRecord[] = [];
  if (first === turnCount - 1 && last === first && lastTurn) candidates = [lastTurn];
  else if (last >= first) {
    const turnRaws = await connection.run('read the turns of a page', (client) =>
      client.lrange(keys.turns, first, last),
    );
    candidates = decodeTurns(keys.turns, turnRaws);
  }
  return finishPage(messages, candidates, { start, first, lastTurn });
}
