import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { SessionIdSchema } from '../backend/request-schemas.js';
import { canListSessions, type SessionStore } from '../stores/session-store.js';
import type { TurnRecord } from '../turns/turn-record.js';
import { TASK_STATE_BY_TURN_STATUS, taskIdOf } from './a2a-task.js';
import { checkHistoryLength, storedTask, turnMessages, turnTimestamp } from './a2a-task-reads.js';

/** `ListTasks`' page size when the request names none (the specification's default). */
export const DEFAULT_TASK_PAGE_SIZE = 50;
/** The largest `pageSize` `ListTasks` takes. */
export const MAX_TASK_PAGE_SIZE = 100;
/**
 * How many of the caller's most recently active contexts (sessions) `ListTasks`
 * looks through without a `contextId`: each costs a read of its turns.
 */
export const MAX_LISTED_CONTEXTS = 500;

interface Candidate {
  sessionId: string;
  turn: TurnRecord;
  taskId: string;
  timestamp: string;
}

/**
 * Answers `ListTasks` over the sessions the caller may read (its tenant's,
 * or its user's with a user-bound key): the tasks (turns) of one context
 * with `contextId`, else of the {@link MAX_LISTED_CONTEXTS} most recently
 * active contexts; filtered by state and `statusTimestampAfter`; newest
 * status first; paged by an opaque `pageToken`. `totalSize` counts every
 * match. Artifacts only with `includeArtifacts`; history as `GetTask`
 * reads `historyLength` (none when unset, to keep pages light).
 */
export async function listTasks(
  sessions: SessionStore,
  params: ListTasksRequest,
): Promise<ListTasksResponse> {
  const pageSize = params.pageSize ?? DEFAULT_TASK_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_TASK_PAGE_SIZE)
    throw new RequestMalformedError(`pageSize must be an integer from 1 to ${MAX_TASK_PAGE_SIZE}`);
  const historyLength = checkHistoryLength(params.historyLength) ?? 0;
  const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
  if (after !== undefined && Number.isNaN(after))
    throw new RequestMalformedError('statusTimestampAfter must be an ISO 8601 timestamp');
  const cursor = params.pageToken ? decodePageToken(params.pageToken) : undefined;

  const candidates: Candidate[] = [];
  for (const sessionId of await contextsOf(sessions, params.contextId)) {
    for (const turn of await sessions.listTurns(sessionId)) {
      const timestamp = turnTimestamp(turn);
      if (params.status && TASK_STATE_BY_TURN_STATUS[turn.status] !== params.status) continue;
      if (after !== undefined && !(Date.parse(timestamp) > after)) continue;
      candidates.push({ sessionId, turn, taskId: taskIdOf(sessionId, turn.turnId), timestamp });
    }
  }
  candidates.sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.taskId.localeCompare(a.taskId));
  const start = cursor ? candidates.findIndex((candidate) => isAfter(candidate, cursor)) : 0;
  const page = start === -1 ? [] : candidates.slice(start, start + pageSize);
  const tasks: Task[] = [];
  for (const { sessionId, turn } of page) {
    const needsMessages = params.includeArtifacts === true || historyLength > 0;
    const messages = needsMessages ? await turnMessages(sessions, sessionId, turn) : [];
    const task = storedTask(sessionId, turn, messages, historyLength);
    if (!params.includeArtifacts) task.artifacts = [];
    tasks.push(task);
  }
  const last = page.at(-1);
  const more = last !== undefined && start + page.length < candidates.length;
  return {
    tasks,
    nextPageToken: more ? encodePageToken(last) : '',
    pageSize: tasks.length,
    totalSize: candidates.length,
  };
}

/** The sessions to look through: the one named, or the caller's most recently active ones. */
async function contextsOf(sessions: SessionStore, contextId: string): Promise<string[]> {
  if (contextId) {
    if (!SessionIdSchema.safeParse(contextId).success)
      throw new RequestMalformedError('contextId must be 1-128 characters: letters, digits, _ - . :');
    return [contextId];
  }
  if (!canListSessions(sessions))
    throw new RequestMalformedError('This server lists tasks of one context only: give contextId');
  const ids: string[] = [];
  let next: string | undefined;
  do {
    const options: { limit: number; cursor?: string } = { limit: MAX_LISTED_CONTEXTS - ids.length };
    if (next !== undefined) options.cursor = next;
    const page = await sessions.listSessions(options);
    ids.push(...page.sessions.map((session) => session.sessionId));
    next = page.nextCursor;
  } while (next !== undefined && ids.length < MAX_LISTED_CONTEXTS);
  return ids;
}

/** True when `candidate` comes after the last task of the previous page (newest first, then by id). */
function isAfter(candidate: Candidate, cursor: { timestamp: string; taskId: string }): boolean {
  const byTime = candidate.timestamp.localeCompare(cursor.timestamp);
  return byTime < 0 || (byTime === 0 && candidate.taskId.localeCompare(cursor.taskId) < 0);
}

function encodePageToken({ timestamp, taskId }: Candidate): string {
  return Buffer.from(JSON.stringify([timestamp, taskId])).toString('base64url');
}

function decodePageToken(token: string): { timestamp: string; taskId: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString());
    if (Array.isArray(value) && value.length === 2 && value.every((part) => typeof part === 'string'))
      return { timestamp: value[0] as string, taskId: value[1] as string };
  } catch {
    // Falls through to the error below.
  }
  throw new RequestMalformedError('pageToken is not one a ListTasks page gave');
}
