import { ValidationError } from '@switchboard/core';
import { formatNumber } from './format.js';

/** A tip worked out from a message. */
export interface Tip {
  /** The tip rate, in percent: `20`. */
  percent: number;
  /** The bill the tip is on. */
  bill: number;
  tip: number;
  total: number;
  /** `20% tip on $45 = $9 (total $54)`. */
  text: string;
}

const TIP_WORD = /\b(?:tip|tips|tipping|gratuity)\b/;
const PERCENT = /(\d+(?:\.\d+)?)\s*(?:%|\bper\s?cent\b)/;
const AMOUNT = /([$€£¥])?\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)/g;

/** Money as people write it: `9`, `10.80`, `1,234.50`. */
function money(value: number, currency: string): string {
  const cents = Math.round(value * 100) / 100;
  const digits = Number.isInteger(cents) ? 0 : 2;
  return `${currency}${cents.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: 2 })}`;
}

/**
 * Reads a tip request ("a 20% tip on $45", "tip 18% on a $62.50 bill") and
 * works it out: the tip and the total. `undefined` when the message does not
 * mention a tip; a {@link ValidationError} when it does but lacks the rate or
 * the bill, so the user is told what to add rather than given a guess.
 *
 * @example
 * ```ts
 * findTip("what's a 20% tip on $45?")?.text; // '20% tip on $45 = $9 (total $54)'
 * ```
 */
export function findTip(message: string): Tip | undefined {
  const text = message.toLowerCase();
  if (!TIP_WORD.test(text)) return undefined;
  const rate = PERCENT.exec(text);
  const amount = [...text.matchAll(AMOUNT)].find(
    (match) =>
      !rate || match.index + match[0].length <= rate.index || match.index >= rate.index + rate[0].length,
  );
  if (!rate || !amount) {
    throw new ValidationError({
      message: "I need the tip rate and the bill, e.g. 'a 20% tip on $45'",
    });
  }
  const percent = Number(rate[1]);
  const currency = amount[1] ?? '';
  const bill = Number((amount[2] ?? '').replaceAll(',', ''));
  const tip = (bill * percent) / 100;
  const total = bill + tip;
  return {
    percent,
    bill,
    tip,
    total,
    text: `${formatNumber(percent)}% tip on ${money(bill, currency)} = ${money(tip, currency)} (total ${money(total, currency)})`,
  };
}
