import { UserError } from './user-error.js';

/** A guardrail refused a message, an answer, or an agent's task or reply. */
export class GuardrailBlockedError extends UserError {
  readonly code = 'blocked';
  /** The guardrail's name. */
  readonly guard: string;
  /** Where it ran: `input`, `output`, `toolInput` or `toolOutput`. */
  readonly stage: string;
  /** Why, as the guardrail said it (for operators). */
  readonly reason: string;
  constructor({
    guard,
    stage,
    reason,
    cause,
  }: { guard: string; stage: string; reason: string; cause?: unknown }) {
    super({ message: `Blocked by guardrail '${guard}' (${stage}): ${reason}`, cause });
    this.guard = guard;
    this.stage = stage;
    this.reason = reason;
  }
}
