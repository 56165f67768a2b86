import { GuardrailBlockedError, type RequestContext } from '@switchboard/core';
import type { GuardCheck, Guardrail, GuardStage, GuardVerdict } from '../guardrails/guardrail.js';
import { isPromiseLike } from '../promise-like.js';

/** What the guardrails of one stage made of a text. */
export interface GuardOutcome {
  /** The text as it goes on: rewritten (redacted) where a guardrail said so. */
  text: string;
  /** Each rewrite, by guardrail, in order. */
  rewrites?: Array<{ guard: string; reason?: string }>;
  /** Set when a guardrail blocked the text: nothing after it ran. */
  block?: { error: GuardrailBlockedError; message?: string };
}

type StageChecks = ReadonlyArray<{ guard: Guardrail; check: GuardCheck }>;

/**
 * The app's guardrails, sorted by stage once: a stage without guardrails
 * costs one length check per turn. Checks run in order, each on the text the
 * previous one let through; one that throws blocks (fails closed), since a
 * broken check must not let text through.
 */
export class Guards {
  readonly input: StageChecks;
  readonly output: StageChecks;
  readonly #toolInput: StageChecks;
  readonly #toolOutput: StageChecks;

  constructor(guardrails: readonly Guardrail[] = []) {
    const of = (stage: GuardStage): StageChecks =>
      guardrails.flatMap((guard) => {
        const check = guard[stage];
        return check ? [{ guard, check }] : [];
      });
    this.input = of('input');
    this.output = of('output');
    this.#toolInput = of('toolInput');
    this.#toolOutput = of('toolOutput');
  }

  /** True when any guardrail checks agents' tasks. */
  get checksToolInput(): boolean {
    return this.#toolInput.length > 0;
  }

  /** The `toolInput` or `toolOutput` checks that apply to `agent` (empty when none). */
  forAgent(stage: 'toolInput' | 'toolOutput', agent: string): StageChecks {
    const checks = stage === 'toolInput' ? this.#toolInput : this.#toolOutput;
    return checks.length === 0
      ? checks
      : checks.filter(({ guard }) => guard.agents === undefined || guard.agents.includes(agent));
  }

  /** Runs `checks` over `text`: at once when every check answers at once, else a promise. */
  static run(
    checks: StageChecks,
    stage: GuardStage,
    text: string,
    request: RequestContext,
    agent?: string,
  ): GuardOutcome | Promise<GuardOutcome> {
    const outcome: GuardOutcome = { text };
    const context = agent === undefined ? { stage, request } : { stage, request, agent };
    const step = (index: number): GuardOutcome | Promise<GuardOutcome> => {
      for (let at = index; at < checks.length; at += 1) {
        const { guard, check } = checks[at] as StageChecks[number];
        let verdict: GuardVerdict | Promise<GuardVerdict>;
        try {
          verdict = check(outcome.text, context);
        } catch (error) {
          return failClosed(outcome, guard, stage, error);
        }
        if (isPromiseLike(verdict)) {
          return Promise.resolve(verdict).then(
            (settled) => (apply(outcome, guard, stage, settled) ? outcome : step(at + 1)),
            (error) => failClosed(outcome, guard, stage, error),
          );
        }
        if (apply(outcome, guard, stage, verdict)) return outcome;
      }
      return outcome;
    };
    return step(0);
  }
}

/** Applies one verdict; true when it blocked (nothing more runs). */
function apply(outcome: GuardOutcome, guard: Guardrail, stage: GuardStage, verdict: GuardVerdict): boolean {
  if (!verdict || verdict.action === 'allow') return false;
  if (verdict.action === 'rewrite') {
    if (typeof verdict.text !== 'string') {
      failClosed(outcome, guard, stage, 'a rewrite without text');
      return true;
    }
    outcome.text = verdict.text;
    const rewrite =
      verdict.reason === undefined ? { guard: guard.name } : { guard: guard.name, reason: verdict.reason };
    if (outcome.rewrites) outcome.rewrites.push(rewrite);
    else outcome.rewrites = [rewrite];
    return false;
  }
  const reason = typeof verdict.reason === 'string' && verdict.reason !== '' ? verdict.reason : 'blocked';
  outcome.block = { error: new GuardrailBlockedError({ guard: guard.name, stage, reason }) };
  if (typeof verdict.message === 'string') outcome.block.message = verdict.message;
  return true;
}

/** A check that threw (or broke its contract) blocks; its error is kept as the cause, for the logs only. */
function failClosed(
  outcome: GuardOutcome,
  guard: Guardrail,
  stage: GuardStage,
  error: unknown,
): GuardOutcome {
  outcome.block = {
    error: new GuardrailBlockedError({ guard: guard.name, stage, reason: 'the check failed', cause: error }),
  };
  return outcome;
}
