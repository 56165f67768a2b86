import type { StepRecorder } from './step-notes.js';

/**
 * The limits a turn runs under: a strategy profile, resolved. Orchestrators
 * read them on `conversation.limits` (the pattern orchestrators take their
 * re-plan and round bounds from there, over their own options).
 */
export interface TurnLimits {
  /** The profile's name (`conservative`, `exploratory`, `fallback`, or one of the app's). */
  readonly profile: string;
  /** Routing decisions per turn before the limit answer. */
  readonly maxHops: number;
  /** The whole turn's deadline in milliseconds, from its start; undefined for none. */
  readonly turnTimeoutMs?: number;
  /**
   * The deadline of one agent call, in ms, for agents without a `timeoutMs`
   * of their own; undefined for the app's `agentTimeoutMs` (60 s by default).
   */
  readonly agentTimeoutMs?: number;
  /** Further attempts of an agent call that failed with a retryable error (a timeout, a remote 5xx). */
  readonly agentRetries: number;
  /** The wait before the first retry, in ms; it doubles on each further one, up to `retryMaxDelayMs`, with full jitter. */
  readonly retryBaseDelayMs: number;
  /** The longest wait between two attempts, in ms. */
  readonly retryMaxDelayMs: number;
  /** New plans per turn (plan-execute). */
  readonly maxReplans: number;
  /** Rounds of fan-out per turn (supervisor). */
  readonly maxRounds: number;
  /** Whether a decision may call several agents at once. */
  readonly allowFanOut: boolean;
  /**
   * What the user gets when a limit (hops, deadline) is hit: `partial` (the
   * best result the turn had, with a note saying it stopped), or `error`
   * (the app's failure message).
   */
  readonly onLimit: 'partial' | 'error';
}

/** A strategy profile as configured: any limit left out takes the `fallback` profile's value. */
export type StrategyProfile = Partial<Omit<TurnLimits, 'profile'>>;

/**
 * The built-in profiles (hops / retries / re-plans as in the seed design):
 * - `conservative`: 5 / 2 / 1, one call per decision, 60 s per turn: for
 *   risky or costly work;
 * - `exploratory`: 15 / 3 / 3, fan-out, 3 rounds, 5 min per turn: research;
 * - `fallback`: 10 / 4 / 2, fan-out, 2 min per turn: the middle ground, and
 *   the base of custom profiles.
 */
export const BUILT_IN_PROFILES: Readonly<Record<'conservative' | 'exploratory' | 'fallback', TurnLimits>> = {
  conservative: {
    profile: 'conservative',
    maxHops: 5,
    turnTimeoutMs: 60_000,
    agentRetries: 2,
    retryBaseDelayMs: 200,
    retryMaxDelayMs: 2_000,
    maxReplans: 1,
    maxRounds: 1,
    allowFanOut: false,
    onLimit: 'partial',
  },
  exploratory: {
    profile: 'exploratory',
    maxHops: 15,
    turnTimeoutMs: 300_000,
    agentRetries: 3,
    retryBaseDelayMs: 200,
    retryMaxDelayMs: 5_000,
    maxReplans: 3,
    maxRounds: 3,
    allowFanOut: true,
    onLimit: 'partial',
  },
  fallback: {
    profile: 'fallback',
    maxHops: 10,
    turnTimeoutMs: 120_000,
    agentRetries: 4,
    retryBaseDelayMs: 200,
    retryMaxDelayMs: 5_000,
    maxReplans: 2,
    maxRounds: 2,
    allowFanOut: true,
    onLimit: 'partial',
  },
};

/**
 * The seed design's defaults as a profile: 3 retries of a failed agent call
 * and 5 s per agent call (the seed allowed 3–5 s per tool; the upper bound,
 * so a slow but working agent is not cut off), the rest as `fallback`
 * (10 hops, 2 min per turn, partial answer at a limit). Not built in: add
 * it under a name of your choice.
 * @example
 * ```ts
 * new App({ name: 'desk', agents, profiles: { seed: SEED_PROFILE }, profile: 'seed' });
 * ```
 */
export const SEED_PROFILE: Readonly<StrategyProfile> = Object.freeze({
  agentRetries: 3,
  agentTimeoutMs: 5_000,
});

/**
 * Switches the turn to another of the app's profiles from its next decision
 * on (a router that sees the request is risky, or exploratory). Recorded as
 * a `profile` note step; an unknown name fails the decision. Does nothing on
 * a hand-built conversation.
 * @example
 * ```ts
 * if (/delete|transfer/i.test(text)) useProfile(conversation, 'conservative');
 * ```
 */
export function useProfile(conversation: { readonly recorder?: StepRecorder }, profile: string): void {
  conversation.recorder?.profile?.(profile);
}
