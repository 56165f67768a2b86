import { ConfigurationError } from '@switchboard/core';
import type { GuardCheck, Guardrail, GuardStage } from './guardrail.js';
import { type Replace, redactCards, redactEmails, redactIbans, redactPhones } from './pii-detectors.js';

/** The kinds of personal data {@link redactPii} finds. */
export type PiiKind = 'email' | 'phone' | 'card' | 'iban';

/** Every kind {@link redactPii} finds, in the order a redaction's `reason` lists them. */
export const PII_KINDS: readonly PiiKind[] = Object.freeze(['email', 'phone', 'card', 'iban']);

/**
 * What replaces a found value. It receives the value as written, so it can
 * keep part of it (`[card …1111]`) or pseudonymise it; the default is
 * `[email]`, `[phone]`, `[card]`, `[iban]`. For redaction to stay idempotent,
 * return text that is not itself an email, phone, card number or IBAN.
 */
export type PiiPlaceholder = (kind: PiiKind, match: string) => string;

/** What {@link redactPii} returns: the redacted text and how many values of each kind it replaced. */
export interface PiiRedaction {
  text: string;
  found: Record<PiiKind, number>;
}

const ALL_STAGES: readonly GuardStage[] = ['input', 'output', 'toolInput', 'toolOutput'];

/**
 * The order of detection, which is not the order of {@link PII_KINDS}: an
 * email can hold digits, and an IBAN's account number can look like a card
 * or a phone number, so those go first.
 */
const DETECTORS: readonly { kind: PiiKind; redact: (text: string, replace: Replace) => string }[] = [
  { kind: 'email', redact: redactEmails },
  { kind: 'iban', redact: redactIbans },
  { kind: 'card', redact: redactCards },
  { kind: 'phone', redact: redactPhones },
];

const defaultPlaceholder: PiiPlaceholder = (kind) => `[${kind}]`;

/**
 * Replaces personal data in a text with typed placeholders, synchronously:
 *
 * - `email`: `name+tag@mail.example.co.uk` (ASCII addresses);
 * - `phone`: international numbers (`+44 20 7946 0958`, `+1 (415) 555-2671`,
 *   `0049 30 901820`, 9–15 digits) and national ones written with separators
 *   (`(415) 555-2671`, `020 7946 0958`, `030/901820`, `06.12.34.56.78`).
 *   Conservative: bare runs of digits without `+` (order ids), dates
 *   (`2026-11-25`, `05.11.2026`), times, versions and amounts are left alone;
 * - `card`: 13–19 digits, with or without spaces or dashes, that pass the
 *   Luhn check and start like a major network's card;
 * - `iban`: compact or in groups of four, validated by the ISO 13616 mod-97 check.
 *
 * Running it on its own output changes nothing more (with the default
 * placeholders). Time is linear in the text's length.
 *
 * For text your own code handles (a log line, a payload for another
 * service). To redact what enters and leaves the app, add the
 * {@link piiRedactor} guardrail instead, which calls this on every stage.
 *
 * @param kinds - the kinds to look for (default: all of {@link PII_KINDS}).
 * @param placeholder - what replaces a value (default: `[kind]`).
 * @example
 * ```ts
 * redactPii('Mail jane+news@example.com or call +44 20 7946 0958');
 * // { text: 'Mail [email] or call [phone]', found: { email: 1, phone: 1, card: 0, iban: 0 } }
 * ```
 */
export function redactPii(
  text: string,
  kinds: readonly PiiKind[] = PII_KINDS,
  placeholder: PiiPlaceholder = defaultPlaceholder,
): PiiRedaction {
  const found: Record<PiiKind, number> = { email: 0, phone: 0, card: 0, iban: 0 };
  let redacted = text;
  for (const { kind, redact } of DETECTORS) {
    if (!kinds.includes(kind)) continue;
    redacted = redact(redacted, (match) => {
      found[kind]++;
      return placeholder(kind, match);
    });
  }
  return { text: redacted, found };
}

/** Options of {@link piiRedactor}. */
export interface PiiRedactorOptions {
  /** The guardrail's name, recorded with each redaction (default `pii`). */
  name?: string;
  /** The kinds to redact (default: all of {@link PII_KINDS}). */
  kinds?: readonly PiiKind[];
  /** What replaces a value (default: `[email]`, `[phone]`, `[card]`, `[iban]`). */
  placeholder?: PiiPlaceholder;
  /**
   * Where to redact (default: all four stages). Leave out `output` to keep
   * answers streaming as they are written: with an `output` hook the engine
   * sends the checked answer whole.
   */
  stages?: readonly GuardStage[];
  /** The agents whose `toolInput`/`toolOutput` are redacted (default: every agent). */
  agents?: readonly string[];
}

/** `redacted 1 email, 2 cards`: counts only, never the values. */
function describe(found: Record<PiiKind, number>): string {
  const parts = PII_KINDS.filter((kind) => found[kind] > 0).map(
    (kind) => `${found[kind]} ${kind}${found[kind] > 1 ? 's' : ''}`,
  );
  return `redacted ${parts.join(', ')}`;
}

/**
 * A guardrail that replaces emails, phone numbers, payment card numbers and
 * IBANs with typed placeholders (see {@link redactPii}) wherever text enters
 * or leaves: the user's message before it is stored, traced or routed, the
 * answer, an agent's task and its reply. Its verdict is a rewrite whose
 * `reason` counts what was redacted (`redacted 1 email, 1 card`), or
 * `undefined` when nothing was found.
 * For one string of your own, call {@link redactPii}.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, guardrails: [piiRedactor({ kinds: ['card', 'iban'], stages: ['input', 'toolOutput'] })] });
 * ```
 */
export function piiRedactor({
  name = 'pii',
  kinds = PII_KINDS,
  placeholder = defaultPlaceholder,
  stages = ALL_STAGES,
  agents,
}: PiiRedactorOptions = {}): Guardrail {
  for (const kind of kinds) {
    if (!PII_KINDS.includes(kind)) {
      throw new ConfigurationError({
        message: `piiRedactor: unknown kind '${kind}' (known: ${PII_KINDS.join(', ')})`,
      });
    }
  }
  for (const stage of stages) {
    if (!ALL_STAGES.includes(stage)) {
      throw new ConfigurationError({
        message: `piiRedactor: unknown stage '${stage}' (known: ${ALL_STAGES.join(', ')})`,
      });
    }
  }
  const check: GuardCheck = (text) => {
    const { text: redacted, found } = redactPii(text, kinds, placeholder);
    if (PII_KINDS.every((kind) => found[kind] === 0)) return undefined;
    return { action: 'rewrite', text: redacted, reason: describe(found) };
  };
  const guardrail: Guardrail = { name };
  for (const stage of stages) guardrail[stage] = check;
  if (agents) guardrail.agents = agents;
  return guardrail;
}
