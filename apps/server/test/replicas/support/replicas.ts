import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MessageItem } from '@switchboard/core';
import type { ApprovalRecord, TurnRecord } from '@switchboard/runtime';
import { readSessionHistory } from '@switchboard/runtime/testing';
import { afterAll } from 'vitest';

const script = fileURLToPath(new URL('../fixtures/replica.ts', import.meta.url));
const repositoryRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

/** How long a replica may take to print `READY` (tsx compiles on a shared, busy machine). */
const START_TIMEOUT_MS = 20_000;
/** How long a replica may take to exit after SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 3_000;

/** A replica process started by {@link useReplicas}. */
export interface Replica {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcessWithoutNullStreams;
  /** What the process printed so far, for failure messages. */
  output(): string;
}

/** The environment of one replica (see `fixtures/replica.ts`). */
export interface ReplicaEnvironment {
  REDIS_URL: string;
  KEY_PREFIX: string;
  ORCHESTRATOR: 'keyword' | 'round-robin' | 'graph' | 'meta';
  LEASE_TTL_MS?: string;
  SESSION_WAIT_MS?: string;
  /** Turns on the sweeper, sweeping this often (ms); `SWEEP_AFTER_MS` (default 1000) is how stale a turn must be. */
  SWEEP_INTERVAL_MS?: string;
  SWEEP_AFTER_MS?: string;
  /** A file the agents append a line to as each run starts, ends or is aborted (see {@link readAgentLog}). */
  AGENT_LOG?: string;
  /** `bullmq`: background turns through BullMQ on the same Redis (else in each process). */
  BACKGROUND?: 'bullmq';
  QUEUE_CONCURRENCY?: string;
  QUEUE_LOCK_MS?: string;
  QUEUE_STALLED_MS?: string;
  /** Turns on callbacks of background turns (to 127.0.0.1), signed with this secret. */
  CALLBACK_SECRET?: string;
}

function isRunning(child: ChildProcessWithoutNullStreams): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function exited(child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<boolean> {
  if (!isRunning(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function startReplica(environment: ReplicaEnvironment, children: ChildProcessWithoutNullStreams[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: repositoryRoot,
    env: { ...process.env, PORT: '0', ...environment },
  });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise<Replica>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`replica did not print READY within ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const onData = () => {
      const url = /^READY (\S+)$/m.exec(output)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      resolve({ url, pid: child.pid as number, child, output: () => output });
    };
    child.stdout.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`replica exited (${code ?? signal}) before READY:\n${output}`));
    });
  });
}

/**
 * Starts replica processes for a test file and stops every one of them in
 * `afterAll`, even when a test failed: SIGTERM first, SIGKILL after
 * {@link STOP_TIMEOUT_MS}. Call it after `useRedis()` so that the replicas are
 * gone before the Redis helper deletes the test's keys.
 */
export function useReplicas(): { start(count: number, environment: ReplicaEnvironment): Promise<Replica[]> } {
  const children: ChildProcessWithoutNullStreams[] = [];
  // Should the test runner itself exit early, no replica outlives it.
  const killAll = () => {
    for (const child of children) if (isRunning(child)) child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  afterAll(
    async () => {
      await Promise.all(
        children.map(async (child) => {
          if (!isRunning(child)) return;
          child.kill('SIGTERM');
          if (!(await exited(child, STOP_TIMEOUT_MS))) {
            child.kill('SIGKILL');
            await exited(child, STOP_TIMEOUT_MS);
          }
        }),
      );
      process.off('exit', killAll);
    },
    2 * STOP_TIMEOUT_MS + 1_000,
  );

  return {
    start: (count, environment) =>
      Promise.all(Array.from({ length: count }, () => startReplica(environment, children))),
  };
}

/** A route step as the chat response shows it. */
export interface RouteStepBody {
  kind: string;
  calls: Array<{ agent: string; reason?: string }>;
}

/** What `POST /v1/chat` (or resolving an approval, or cancelling a turn) answered, and how long it took. */
export interface ChatOutcome {
  status: number;
  elapsedMs: number;
  body: {
    sessionId?: string;
    turnId?: string;
    reply?: string;
    status?: string;
    steps?: RouteStepBody[];
    approvals?: ApprovalRecord[];
    error?: { code: string; message: string; outcome?: string; turnId?: string };
  };
}

/** Options of the request helpers. */
export interface RequestOptions {
  /** A request that takes longer fails the test (default 30 s). */
  timeoutMs?: number;
  /** Extra request headers, e.g. `Idempotency-Key`. */
  headers?: Record<string, string>;
}

async function post(
  url: string,
  body: unknown,
  { timeoutMs = 30_000, headers = {} }: RequestOptions,
): Promise<ChatOutcome> {
  const startedAt = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const parsed = (await response.json()) as ChatOutcome['body'];
  return { status: response.status, elapsedMs: performance.now() - startedAt, body: parsed };
}

/** Sends one chat message; a request that takes longer than `timeoutMs` fails the test. */
export function chat(
  url: string,
  body: { message: string; sessionId?: string },
  options: RequestOptions = {},
): Promise<ChatOutcome> {
  return post(`${url}/v1/chat`, body, options);
}

/** `POST /v1/sessions/:id/approvals/:approvalId`: approves or rejects a paused call. */
export function resolveApproval(
  url: string,
  sessionId: string,
  approvalId: string,
  decision: { decision: 'approve' | 'reject'; comment?: string; userId?: string },
  options: RequestOptions = {},
): Promise<ChatOutcome> {
  return post(`${url}/v1/sessions/${sessionId}/approvals/${approvalId}`, decision, options);
}

/** `POST /v1/sessions/:id/turns/:turnId/cancel`: stops a running or paused turn, wherever it runs. */
export function cancelTurn(
  url: string,
  sessionId: string,
  turnId: string,
  options: RequestOptions = {},
): Promise<ChatOutcome> {
  return post(`${url}/v1/sessions/${sessionId}/turns/${turnId}/cancel`, undefined, options);
}

/** A session as `GET /v1/sessions/:id` shows it. */
export interface SessionBody {
  messages: MessageItem[];
  turns: TurnRecord[];
  pendingApprovals: ApprovalRecord[];
  activeTurn?: { turnId: string; status: TurnRecord['status'] };
}

/** Reads a session's history from a replica. */
export async function readSession(url: string, sessionId: string): Promise<SessionBody> {
  // Every page: a session's history comes in pages of at most 200 messages.
  return (await readSessionHistory(
    (path) => fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) }),
    sessionId,
  )) as SessionBody;
}

/** One line of a replica's `AGENT_LOG`. */
export interface AgentRun {
  pid: number;
  agent: string;
  message: string;
  event: 'start' | 'end' | 'abort';
  /** The call's `ctx.idempotencyKey` (logged by the refund agent). */
  key?: string;
}

/** The agent runs every replica logged to `path` so far, in order (none when the file does not exist yet). */
export function readAgentLog(path: string): AgentRun[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AgentRun);
}

/** The pid an agent of `fixtures/replica.ts` put in its reply. */
export function replyPid(reply: string | undefined): number | undefined {
  const match = /\(pid (\d+)\)/.exec(reply ?? '');
  return match ? Number(match[1]) : undefined;
}
