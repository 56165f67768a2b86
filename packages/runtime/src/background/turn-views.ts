/**
 * What a background turn reads as, before and after it opens: its status
 * view, the receipt `background: true` answers, its id under an
 * `Idempotency-Key`, and the turn request its job runs.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { createId } from '@switchboard/core';
import type { TurnRequest, TurnResult } from '../engine/turn-types.js';
import type { RouteStep, TurnStatus } from '../turns/turn-record.js';
import type { BackgroundRecord } from './background-records.js';
import { copyDefined } from './copy-defined.js';
import type { QueuedTurn } from './turn-queue.js';

/** Where a turn stands, as `GET /v1/sessions/:id/turns/:turnId` reports it. */
export type TurnProgress = TurnStatus | 'queued';

/** A turn's status and, once it has one, its result (see `BackgroundTurns.status`). */
export interface TurnStatusView {
  sessionId: string;
  turnId: string;
  status: TurnProgress;
  /** The answer (or the approval message while paused); absent while queued or running. */
  reply?: string;
  steps?: RouteStep[];
  approvals?: TurnResult['approvals'];
  usage?: TurnResult['usage'];
  traceId?: string;
  error?: { code: string; message: string };
  /** When a background turn was queued (ISO 8601). */
  queuedAt?: string;
}

/** What `background: true` answers at once. */
export interface QueuedTurnReceipt {
  sessionId: string;
  turnId: string;
  status: 'queued';
}

/** The turn id of a background turn queued with an `Idempotency-Key`: a retried request queues the same turn. */
export function turnIdForKey(idempotencyKey: string, tenantId = ''): string {
  const digest = createHash('sha256')
    .update(`switchboard:background:${tenantId}:${idempotencyKey}`)
    .digest('hex');
  return `turn_${digest.slice(0, 32)}`;
}

/** The turn request a job runs: it opens with an idempotency key, so a second run finds the first's turn. */
export function requestOf(job: QueuedTurn): TurnRequest {
  const request: TurnRequest = {
    sessionId: job.sessionId,
    message: job.message,
    turnId: job.turnId,
    // The job's second run finds the first's turn by this key: its effect is stored once.
    idempotencyKey: job.idempotencyKey ?? `background:${job.turnId}`,
    entryPoint: job.entryPoint,
    requestId: createId('req'),
  };
  copyDefined(request, job, ['tenantId', 'userId', 'keyName', 'metadata', 'concurrency']);
  return request;
}

/** What a background record says of its turn, before (or without) a turn record. */
export function viewOfRecord(record: BackgroundRecord): TurnStatusView {
  const view: TurnStatusView = {
    sessionId: record.sessionId,
    turnId: record.turnId,
    status: STATUS_OF_STATE[record.state],
    queuedAt: new Date(record.queuedAt).toISOString(),
  };
  if (record.error) view.error = { ...record.error };
  return view;
}

const STATUS_OF_STATE: Record<BackgroundRecord['state'], TurnProgress> = {
  queued: 'queued',
  started: 'running',
  cancelled: 'interrupted',
  failed: 'failed',
};

/** A stored turn's result, with when it was queued when it is a background turn. */
export function withQueuedAt(result: TurnResult, record: BackgroundRecord | undefined): TurnStatusView {
  return record ? { ...result, queuedAt: new Date(record.queuedAt).toISOString() } : result;
}
