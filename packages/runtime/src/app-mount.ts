/**
 * What `App.mount()` builds around its orchestrator: the turn engine (with
 * its metrics, trace naming and live configuration), the background turns
 * and schedules, and the HTTP routes over them. Each is a function of its
 * own, so that the app keeps each part as soon as it is made (and its
 * `close()` closes what a mount that failed halfway had made).
 *
 * @module
 */
import { createNoopMeter, type Meter, metrics as otelMetrics } from '@opentelemetry/api';
import type { AgentMeta, Orchestrator } from '@switchboard/core';
import type { Agent } from './agents/agent.js';
import { publishesGraph } from './agents/published-graph.js';
import type { AppOptions } from './app-options.js';
import type { AppParts } from './app-parts.js';
import { conversationIndex } from './backend/conversation-index.js';
import { sessionIdForKey } from './backend/session-id-for-key.js';
import { appBackground } from './background/app-background.js';
import { BackgroundMetrics } from './background/background-metrics.js';
import type { BackgroundTurns } from './background/background-turns.js';
import type { Schedules } from './background/schedules.js';
import { appBudgets } from './budgets/app-budgets.js';
import type { Budgets } from './budgets/budgets.js';
import type { ConfigAdmin } from './config/config-admin.js';
import { TraceNaming } from './engine/trace-labels.js';
import {
  type ApprovalResolution,
  type CancelRequest,
  TurnEngine,
  type TurnRequest,
  type TurnResult,
} from './engine/turn-engine.js';
import { EngineMetrics, METER_NAME } from './metrics/engine-metrics.js';
import { HttpMetrics } from './metrics/http-metrics.js';
import { unexpectedErrorLog } from './server/request-log.js';
import { createRoutes } from './server/routes.js';
import { userSessions } from './stores/user-sessions.js';

/** What the parts a mount builds share. */
export interface Mounting {
  appName: string;
  orchestrator: Orchestrator;
  options: AppOptions;
  /** What records the app's metrics; undefined when there is no meter provider anywhere. */
  meter: Meter | undefined;
  /** The app's spending budgets (undefined without `budgets`). */
  budgets: Budgets | undefined;
}

/** What of the app its routes read and call back, besides its parts. */
export interface MountingApp {
  readonly name: string;
  readonly agentMetas: AgentMeta[];
  readonly config: ConfigAdmin;
  resolveApproval(resolution: ApprovalResolution): Promise<TurnResult>;
  cancelTurn(request: CancelRequest): Promise<TurnResult>;
  deleteSession(sessionId: string, tenantId?: string): Promise<boolean>;
  deleteUser(userId: string, tenantId?: string): Promise<{ deletedSessions: number }>;
}

/** Starts a mount of `orchestrator`: the meter it records with (the app's own, or the global one) and its budgets. */
export function mounting(
  appName: string,
  orchestrator: Orchestrator,
  { metrics, logger }: AppParts,
  options: AppOptions,
): Mounting {
  const meter = metrics?.meter ?? otelMetrics.getMeter(METER_NAME);
  // No meter provider anywhere: nothing would be recorded, so neither the turn nor the request path records.
  const recording = meter !== createNoopMeter() ? meter : undefined;
  const budgets = appBudgets(options.budgets, options.budgetCounters, { logger, meter: recording, appName });
  return { appName, orchestrator, options, meter: recording, budgets };
}

/** The app's turn engine, running the orchestrator over `agents`; `signal` abandons its running turns. */
export function appEngine(
  { sessions, memory, logger, events, configCache }: AppParts,
  { appName, orchestrator, options, meter, budgets }: Mounting,
  agents: ReadonlyMap<string, Agent>,
  signal: AbortSignal,
): TurnEngine {
  return new TurnEngine(
    {
      budgets,
      orchestrator,
      agents,
      sessions,
      memory,
      signal,
      logger,
      metrics: meter
        ? new EngineMetrics(meter, { app: appName, orchestrator: orchestrator.name })
        : undefined,
      naming: new TraceNaming(appName, orchestrator.name, options.traceTags),
      eventLog: events,
      config: configCache,
    },
    options,
  );
}

/** The app's background turns and schedules (none with `background: false`), run on its engine. */
export function appBackgroundTurns(
  { memory, logger }: AppParts,
  { appName, options, meter }: Mounting,
  engine: TurnEngine,
  /** Keeps a turn in flight until it settles (the app's close waits for it). */
  track: (turn: Promise<TurnResult>) => Promise<TurnResult>,
): { turns: BackgroundTurns; schedules: Schedules } | undefined {
  return appBackground(options.background, {
    engine,
    memory,
    logger,
    track,
    exposeErrorDetails: options.exposeErrorDetails,
    concurrency: options.concurrency ?? 'wait',
    metrics: meter ? new BackgroundMetrics(meter, appName) : undefined,
  });
}

/** The app's HTTP API (and the A2A and MCP endpoints it mounts) over its engine. */
export function appRoutes(
  app: MountingApp,
  { sessions, memory, logger, events, rateLimiter, metrics }: AppParts,
  { orchestrator, options, meter, budgets }: Mounting,
  mounted: {
    engine: TurnEngine;
    background: BackgroundTurns | undefined;
    schedules: Schedules | undefined;
    /** Runs a turn the routes received (kept in flight by the app). */
    run: (request: TurnRequest) => TurnResult | Promise<TurnResult>;
    checkReady: () => Promise<readonly string[]>;
    isClosing: () => boolean;
  },
) {
  const { engine, background } = mounted;
  return createRoutes(
    {
      name: app.name,
      orchestratorName: orchestrator.name,
      agents: app.agentMetas,
      ...(publishesGraph(orchestrator) ? { graph: orchestrator.view } : {}),
      ...(engine.agentStats ? { agentStats: engine.agentStats } : {}),
      sessions,
      chat: mounted.run,
      resolveApproval: (resolution) => app.resolveApproval(resolution),
      cancelTurn: (request) => app.cancelTurn(request),
      sessionIdForKey: (key, tenantId) => sessionIdForKey(key, tenantId),
      conversations: conversationIndex(memory, options.sessionIdleTtlSeconds ?? 86_400),
      sessionsOf: (tenantId) => engine.sessionsOf(tenantId),
      events,
      background,
      schedules: mounted.schedules,
      turnStatus: (sessionId, turnId, tenantId, userId) => {
        if (background) return background.status(sessionId, turnId, { tenantId, userId });
        const view = engine.sessionsOf(tenantId);
        const store = userId === undefined ? view : userSessions(view, userId);
        return engine.readTurn(store, sessionId, turnId);
      },
      deleteSession: (sessionId, tenantId) => app.deleteSession(sessionId, tenantId),
      deleteUser: (userId, tenantId) => app.deleteUser(userId, tenantId),
      auth: options.auth,
      approvers: options.approvers,
      rateLimit: options.rateLimit,
      rateLimiter,
      checkReady: mounted.checkReady,
      isClosing: mounted.isClosing,
      log: unexpectedErrorLog(logger),
      logger,
      cors: options.cors,
      metrics,
      httpMetrics: meter ? new HttpMetrics(meter) : undefined,
      usage: budgets && ((tenantId, sessionId, totals) => budgets.report(tenantId, sessionId, totals)),
      config: app.config,
    },
    options,
  );
}
