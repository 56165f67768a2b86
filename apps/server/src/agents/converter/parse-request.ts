import { ValidationError } from '@switchboard/core';

/** A conversion asked for in a message, units still as written. */
export interface ConversionRequest {
  value: number;
  from: string;
  to: string;
}

const NUMBER = String.raw`(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\.\d+|\b(?:an?|one)\b)`;
const PHRASE = String.raw`([a-z][a-z/]*(?:\s+per\s+[a-z]+)?)`;
const CONNECTOR = '(?:to|into|in|as)';

/** "5 km to miles", "convert 72 f in c", "what is 10 kg as lb". */
const FORWARD = new RegExp(String.raw`${NUMBER}\s*${PHRASE}\s+${CONNECTOR}\s+${PHRASE}`);
/** "how many ounces in 2 lb", "how many cups are in a gallon". */
const HOW_MANY = new RegExp(
  String.raw`how\s+many\s+${PHRASE}\s+(?:are\s+|is\s+)?(?:there\s+)?(?:in|per)\s+${NUMBER}\s*${PHRASE}`,
);
/** "2 lb is how many ounces". */
const BACKWARD = new RegExp(String.raw`${NUMBER}\s*${PHRASE}\s+(?:is|are|equals|=)\s+how\s+many\s+${PHRASE}`);
/** "convert km to miles": one unit. */
const UNIT_ONLY = new RegExp(String.raw`\bconvert\s+${PHRASE}\s+${CONNECTOR}\s+${PHRASE}`);

function toNumber(text: string): number {
  if (text === 'a' || text === 'an' || text === 'one') return 1;
  return Number(text.replaceAll(',', ''));
}

/** Lower-cases and drops the words that only decorate a temperature ("72 degrees F", "20°C"). */
export function normalizeRequest(message: string): string {
  return message
    .toLowerCase()
    .replace(/°\s*/g, ' ')
    .replace(/\bdeg(?:ree)?s?\b\.?/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Reads "convert 5 km to miles", "72 fahrenheit in celsius", "how many
 * ounces in 2 lb", "2 lb is how many ounces". Throws a {@link ValidationError}
 * for the user when the message holds no conversion.
 */
export function parseConversion(
  message: string,
  { maxLength = 500 }: { maxLength?: number } = {},
): ConversionRequest {
  if (message.length > maxLength) {
    throw new ValidationError({ message: `the message is too long (at most ${maxLength} characters)` });
  }
  const text = normalizeRequest(message);
  const howMany = HOW_MANY.exec(text);
  if (howMany) return { value: toNumber(howMany[2] ?? ''), from: howMany[3] ?? '', to: howMany[1] ?? '' };
  const backward = BACKWARD.exec(text);
  if (backward) return { value: toNumber(backward[1] ?? ''), from: backward[2] ?? '', to: backward[3] ?? '' };
  const forward = FORWARD.exec(text);
  if (forward) return { value: toNumber(forward[1] ?? ''), from: forward[2] ?? '', to: forward[3] ?? '' };
  const unitOnly = UNIT_ONLY.exec(text);
  if (unitOnly) return { value: 1, from: unitOnly[1] ?? '', to: unitOnly[2] ?? '' };
  throw new ValidationError({
    message:
      "I need an amount, a unit and a target unit, e.g. 'convert 5 km to miles' or 'how many ounces in 2 lb'",
  });
}
