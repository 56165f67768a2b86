import type { Units } from './profile.js';

/** What a user message asks for, as far as the onboarding flow is concerned. */
export type Intent =
  | { kind: 'introduce'; name: string }
  | { kind: 'set-units'; units: Units }
  | { kind: 'weather'; units?: Units }
  | { kind: 'profile' }
  | { kind: 'other' };

const PROFILE =
  /\b(?:what(?:'s|\s+is)\s+my\s+name|who\s+am\s+i|what\s+do\s+you\s+(?:know|remember)\s+about\s+me)\b/i;
const INTRODUCE = /\b(?:my\s+name\s+is|call\s+me)\s+(\p{L}[\p{L}'-]*)/iu;
const WEATHER = /\b(?:weather|temperature|forecast)\b/i;
const IMPERIAL = /\b(?:imperial|fahrenheit)\b/i;
const METRIC = /\b(?:metric|celsius)\b/i;

function unitsIn(text: string): Units | undefined {
  if (IMPERIAL.test(text)) return 'imperial';
  if (METRIC.test(text)) return 'metric';
  return undefined;
}

/**
 * Recognises the intent of a message with a few patterns: a question about
 * the profile, an introduction ("my name is …"), a weather question
 * (optionally naming units for this answer only), or a unit preference.
 *
 * @example
 * ```ts
 * parseIntent('my name is ada'); // { kind: 'introduce', name: 'Ada' }
 * parseIntent('I prefer imperial'); // { kind: 'set-units', units: 'imperial' }
 * ```
 */
export function parseIntent(text: string): Intent {
  if (PROFILE.test(text)) return { kind: 'profile' };
  const introduction = INTRODUCE.exec(text);
  if (introduction?.[1]) {
    const word = introduction[1];
    return { kind: 'introduce', name: word.charAt(0).toUpperCase() + word.slice(1) };
  }
  const units = unitsIn(text);
  if (WEATHER.test(text)) return units ? { kind: 'weather', units } : { kind: 'weather' };
  if (units) return { kind: 'set-units', units };
  return { kind: 'other' };
}
