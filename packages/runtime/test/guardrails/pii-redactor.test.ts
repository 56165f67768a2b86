import { ConfigurationError, RequestContext } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { type GuardContext, type GuardStage, type PiiKind, piiRedactor, redactPii } from '../../src/index.js';

function context(stage: GuardStage): GuardContext {
  const request = new RequestContext({
    sessionId: 's1',
    requestId: 'r1',
    signal: new AbortController().signal,
    memory: () => {
      throw new Error('no memory in this test');
    },
  });
  return { stage, request };
}

function thrownBy(build: () => unknown): unknown {
  try {
    build();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

/** Each value, alone in a sentence, becomes exactly its placeholder. */
function expectRedacted(kind: PiiKind, values: readonly string[]): void {
  for (const value of values) {
    const { text, found } = redactPii(`Details: ${value}. Thanks!`);
    expect(text, value).toBe(`Details: [${kind}]. Thanks!`);
    expect(found[kind], value).toBe(1);
  }
}

/** Each text comes back unchanged. */
function expectUntouched(texts: readonly string[]): void {
  for (const text of texts) {
    const result = redactPii(text);
    expect(result.text, text).toBe(text);
    expect(result.found, text).toEqual({ email: 0, phone: 0, card: 0, iban: 0 });
  }
}

describe('redactPii', () => {
  it('redacts emails, with plus-addressing, subdomains, dots, underscores and capitals', () => {
    expectRedacted('email', [
      'jane.doe@example.com',
      'jane+newsletter@example.com',
      'ops_team@mail.eu.example.co.uk',
      'John.Smith@Example.ORG',
      'a1@x-y.io',
    ]);
  });

  it('redacts international phone numbers in +44, +1, +49 and +33 formats, and 00 prefixes', () => {
    expectRedacted('phone', [
      '+44 20 7946 0958',
      '+44 (0)20 7946 0958',
      '+447700900123',
      '+1 (415) 555-2671',
      '+1-415-555-2671',
      '+1 415 555 2671',
      '+49 30 901820',
      '+49 171 1234567',
      '+49 (0)30 12345678',
      '+33 1 42 68 53 00',
      '+33 6 12 34 56 78',
      '+33.6.12.34.56.78',
      '0044 20 7946 0958',
    ]);
  });

  it('redacts national phone numbers written with separators', () => {
    expectRedacted('phone', [
      '(415) 555-2671',
      '415-555-2671',
      '415.555.2671',
      '1-800-555-0199',
      '020 7946 0958',
      '(020) 7946 0958',
      '07700 900123',
      '030/901820',
      '030-12345678',
      '0171 1234567',
      '01 42 68 53 00',
      '06.12.34.56.78',
    ]);
  });

  it('redacts card numbers of several networks whose Luhn check passes, with spaces, dashes or none', () => {
    expectRedacted('card', [
      '4111 1111 1111 1111', // Visa
      '4012888888881881', // Visa
      '5555-5555-5555-4444', // Mastercard
      '2223 0031 2200 3222', // Mastercard 2-series
      '3782 822463 10005', // Amex
      '371449635398431', // Amex
      '6011 1111 1111 1117', // Discover
      '3530 1113 3330 0000', // JCB
      '3056 9309 0259 04', // Diners
    ]);
  });

  it('redacts IBANs from DE, GB, FR and NL, grouped or compact, in any case', () => {
    expectRedacted('iban', [
      'DE89 3704 0044 0532 0130 00',
      'DE89370400440532013000',
      'de89 3704 0044 0532 0130 00',
      'GB82 WEST 1234 5698 7654 32',
      'GB29NWBK60161331926819',
      'FR14 2004 1010 0505 0001 3M02 606',
      'FR7630006000011234567890189',
      'NL91 ABNA 0417 1643 00',
      'NL91ABNA0417164300',
    ]);
  });

  it('ends an IBAN where its check passes, not at the next word', () => {
    expect(redactPii('Pay to BE68 5390 0754 7034 THEN confirm').text).toBe('Pay to [iban] THEN confirm');
    expect(redactPii('IBAN:DE89370400440532013000, BIC COBADEFFXXX').text).toBe(
      'IBAN:[iban], BIC COBADEFFXXX',
    );
  });

  it('leaves card numbers alone when the Luhn check fails or the number does not start like a card', () => {
    expectUntouched([
      'Card 4111 1111 1111 1112 was declined',
      'Card 5555-5555-5555-4445 was declined',
      'Card 3782 822463 10006 was declined',
      // Luhn passes, but no network issues cards starting 9, 1 or 2026: order ids and timestamps.
      'Order 9000123456789016 shipped',
      'Event 1700000000004 logged',
      'Batch 2026112512304501 done',
      // 20 digits: longer than any card, and not cut into one.
      'Tracking 4111 1111 1111 1111 1111',
    ]);
  });

  it('leaves IBANs alone when the mod-97 check fails', () => {
    expectUntouched([
      'Wrong IBAN DE89 3704 0044 0532 0130 01',
      'Wrong IBAN DE88370400440532013000',
      'Wrong IBAN GB82 WEST 1234 5698 7654 33',
      'Wrong IBAN NL91ABNA0417164301',
      'Wrong IBAN FR14 2004 1010 0505 0001 3M02 607',
    ]);
  });

  it('leaves dates, times, versions, amounts, order ids and other numbers alone', () => {
    expectUntouched([
      'The launch is on 2026-11-25 at 12:30:45.',
      'Dates: 25.11.2026, 11/25/2026, 25/11/2026, 05.11.2026 10:30, 01/05/2026 0800, 05 11 2026 10 people.',
      'Upgrade from v1.2.3 to 1.10.0-beta.2 (build 2026.11.25).',
      'Total: 1,234.56 EUR, or 1 234 567,89 in French notation, or $12,345,678.90.',
      'Order ORD-2026-001234, ticket #100234567, invoice 20261125-0042, SKU 4006381333931.',
      'ISBN 978-3-16-148410-0, IP 192.168.1.10, open 0900-1700, temperature +12.5, score +15 points.',
      'Epoch 1700000000000 and a range of 123-456-7890 is not a North American number (area code 1xx).',
    ]);
  });

  it('redacts several kinds in one text and counts them', () => {
    const result = redactPii(
      'I am jane+shop@example.co.uk, call +44 20 7946 0958 or 020 7946 0958. ' +
        'Card 4111-1111-1111-1111, refund to GB82 WEST 1234 5698 7654 32.',
    );
    expect(result.text).toBe('I am [email], call [phone] or [phone]. Card [card], refund to [iban].');
    expect(result.found).toEqual({ email: 1, phone: 2, card: 1, iban: 1 });
  });

  it('changes nothing more when run on its own output', () => {
    const original =
      'Mail a.b+c@sub.example.com, +1 (415) 555-2671, 5555 5555 5555 4444, NL91 ABNA 0417 1643 00, ' +
      '06.12.34.56.78 and 2026-11-25.';
    const once = redactPii(original);
    const twice = redactPii(once.text);
    expect(once.text).not.toBe(original);
    expect(twice.text).toBe(once.text);
    expect(twice.found).toEqual({ email: 0, phone: 0, card: 0, iban: 0 });
  });

  it('looks only for the kinds asked for, and uses a custom placeholder', () => {
    const text = 'jane@example.com, 4111 1111 1111 1111, +49 30 901820';
    expect(redactPii(text, ['card']).text).toBe('jane@example.com, [card], +49 30 901820');
    const masked = redactPii(text, ['card', 'email'], (kind, match) =>
      kind === 'card' ? `[card …${match.slice(-4)}]` : '<hidden>',
    );
    expect(masked.text).toBe('<hidden>, [card …1111], +49 30 901820');
  });

  it('finishes on 64 KiB adversarial strings', () => {
    const size = 64 * 1024;
    const fill = (unit: string, prefix = '') =>
      (prefix + unit.repeat(Math.ceil(size / unit.length))).slice(0, size);
    const adversarial = [
      fill('a'),
      fill('a.'),
      fill('a@'),
      fill('a.', 'x@'),
      fill('a-', 'x@'),
      fill('4'),
      fill('4 '),
      fill('4-'),
      fill('+1 '),
      fill('1 ', '+'),
      fill('01 '),
      fill('(0)1 ', '+4'),
      fill('DE89 '),
      fill('A1 '),
      fill('0.'),
    ];
    for (const text of adversarial) {
      const result = redactPii(text);
      expect(result.text.length).toBeLessThanOrEqual(text.length);
    }
  });
});

describe('piiRedactor', () => {
  it('rewrites at all four stages by default, synchronously, with a reason that counts and never quotes', () => {
    const guard = piiRedactor();
    expect(guard.name).toBe('pii');
    const text = 'From jane.doe@example.com, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00.';
    for (const stage of ['input', 'output', 'toolInput', 'toolOutput'] as const) {
      const verdict = guard[stage]?.(text, context(stage));
      expect(verdict, stage).toEqual({
        action: 'rewrite',
        text: 'From [email], card [card], IBAN [iban].',
        reason: 'redacted 1 email, 1 card, 1 iban',
      });
    }
  });

  it('answers undefined when there is nothing to redact', () => {
    const guard = piiRedactor();
    expect(
      guard.input?.('Ship order ORD-2026-001234 on 2026-11-25 at 12:30.', context('input')),
    ).toBeUndefined();
  });

  it('never puts the values in the reason, and pluralises counts', () => {
    const values = ['bob@example.org', 'alice@example.org', '+33 1 42 68 53 00', '378282246310005'];
    const verdict = piiRedactor().input?.(`Contacts: ${values.join(', ')}`, context('input'));
    expect(verdict).toMatchObject({ action: 'rewrite', reason: 'redacted 2 emails, 1 phone, 1 card' });
    const reason = (verdict as { reason: string }).reason;
    for (const value of values) {
      expect(reason).not.toContain(value.split('@')[0]);
      const digits = value.replace(/\D/g, '');
      if (digits) expect(reason).not.toContain(digits.slice(-4));
    }
  });

  it('hooks only the stages, kinds and agents it is given, under its own name', () => {
    const guard = piiRedactor({
      name: 'cards-only',
      kinds: ['card'],
      stages: ['input', 'toolOutput'],
      agents: ['billing'],
    });
    expect(guard.name).toBe('cards-only');
    expect(guard.output).toBeUndefined();
    expect(guard.toolInput).toBeUndefined();
    expect(guard.agents).toEqual(['billing']);
    expect(guard.toolOutput?.('Card 4111111111111111 for jane@example.com', context('toolOutput'))).toEqual({
      action: 'rewrite',
      text: 'Card [card] for jane@example.com',
      reason: 'redacted 1 card',
    });
  });

  it('uses a custom placeholder', () => {
    const guard = piiRedactor({ placeholder: (kind) => `<${kind.toUpperCase()}>` });
    expect(guard.input?.('Reach me at +1 415 555 2671', context('input'))).toMatchObject({
      text: 'Reach me at <PHONE>',
    });
  });

  it('refuses unknown kinds and stages when it is built', () => {
    const unknownKind = thrownBy(() => piiRedactor({ kinds: ['ssn' as PiiKind] }));
    expect(ConfigurationError.isInstance(unknownKind)).toBe(true);
    expect((unknownKind as Error).message).toMatch(/unknown kind 'ssn'/);
    expect(() => piiRedactor({ stages: ['reply' as GuardStage] })).toThrow(/unknown stage 'reply'/);
  });
});
