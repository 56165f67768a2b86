import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { KeywordMatcher } from '../src/keyword-matcher.js';
import { stem, tokenize, words } from '../src/word-stems.js';

function matches(keyword: string, text: string): boolean {
  return new KeywordMatcher([{ name: 'agent', keywords: [keyword] }]).best(text) !== undefined;
}

describe('word matching', () => {
  it('matches whole words only: "cat" is not found in "concatenate"', () => {
    expect(matches('cat', 'please concatenate these strings')).toBe(false);
    expect(matches('cat', 'my cat is asleep')).toBe(true);
    expect(matches('cat', 'Cat!')).toBe(true);
    expect(matches('add', 'address book')).toBe(false);
  });

  it('ignores case and accents written in either Unicode form', () => {
    expect(matches('Weather', 'WEATHER in Oslo')).toBe(true);
    expect(matches('café', 'Where is the nearest CAFE\u0301?')).toBe(true);
  });

  it('splits plain ASCII text exactly as it splits any Unicode text', () => {
    // Plain ASCII takes a faster path; a trailing accented word sends the same text down the Unicode one.
    const alphabet = 'aZq09 \t\n.,?!\'"$%-+/';
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed;
    };
    for (let sample = 0; sample < 2_000; sample++) {
      let text = '';
      for (let length = next() % 14; length > 0; length--) text += alphabet[next() % alphabet.length];
      expect([...words(text), 'é'], JSON.stringify(text)).toEqual(words(`${text} é`));
    }
    expect(words("What's 5km in MILES?")).toEqual(['what', "'", 's', '5', 'km', 'in', 'miles', '?']);
  });

  it('matches multi-word phrases as consecutive words', () => {
    expect(matches('what time', 'What   time is it?')).toBe(true);
    expect(matches('what time', 'what is the time')).toBe(false);
    expect(matches('what time', 'what, time')).toBe(false);
    expect(matches('square root', 'the square roots of 9')).toBe(true);
  });

  it('tolerates plurals and -ing / -ed forms', () => {
    for (const [keyword, text] of [
      ['city', 'cities in France'],
      ['box', 'three boxes'],
      ['match', 'football matches'],
      ['glass', 'two glasses'],
      ['convert', 'converting 5 km'],
      ['convert', 'I converted it'],
      ['convert', 'it converts'],
      ['translate', 'translating a poem'],
      ['translate', 'translated text'],
      ['run', 'running late'],
      ['stop', 'it stopped'],
      ['add', 'adding numbers'],
      ['multiply', 'multiplied by 3'],
      ['multiply', 'multiplying'],
      ['movie', 'movies tonight'],
      ['mile', '5 MILES'],
      ['rain', 'is it raining'],
    ] as const) {
      expect(matches(keyword, text), `${keyword} ~ ${text}`).toBe(true);
    }
  });

  it('does not stretch inflection to derived words', () => {
    expect(matches('convert', 'unit conversion')).toBe(false);
    expect(matches('calculator', 'calculate this')).toBe(false);
    expect(stem('string')).toBe('string');
    expect(stem('need')).toBe('need');
    expect(stem('this')).toBe('this');
  });

  it('leaves a word alone when no rule applies to its ending, and still reduces the others', () => {
    for (const word of ['weather', 'question', 'about', 'number', '12345', 'hello', 'shipment'])
      expect(stem(word)).toBe(word);
    expect(tokenize('shipping questions, billed and cities')).toEqual([
      'ship',
      'question',
      ',',
      'bill',
      'and',
      'citi',
    ]);
  });

  it('matches symbols and splits numbers from units', () => {
    expect(matches('+', '2+2')).toBe(true);
    expect(matches('km/h', 'convert 60 mph to km/h')).toBe(true);
    expect(matches('km', 'I ran 5km today')).toBe(true);
    expect(matches('°c', 'it is 20°C')).toBe(true);
    expect(tokenize("What's 5km in miles?")).toEqual(['what', "'", 's', '5', 'km', 'in', 'mil', '?']);
  });

  it('scores phrases above single words and counts a repeated keyword once', () => {
    const matcher = new KeywordMatcher([
      { name: 'weather', keywords: ['time'] },
      { name: 'clock', keywords: ['what time'] },
    ]);
    expect(matcher.best('what time is it')).toEqual({ name: 'clock', score: 2, matched: ['what time'] });
    const repeated = new KeywordMatcher([{ name: 'a', keywords: ['rain'] }]).best('rain rain rain');
    expect(repeated?.score).toBe(1);
  });

  it('prefers the literal keyword over an inflected one ("time" is not "times")', () => {
    const matcher = new KeywordMatcher([
      { name: 'calculator', keywords: ['times'] },
      { name: 'clock', keywords: ['time'] },
    ]);
    expect(matcher.best('current time please')?.name).toBe('clock');
    expect(matcher.best('3 times 4')?.name).toBe('calculator');
  });

  it('breaks ties by declared order and honours a candidate set', () => {
    const matcher = new KeywordMatcher([
      { name: 'first', keywords: ['report'] },
      { name: 'second', keywords: ['report'] },
    ]);
    expect(matcher.score('send the report').map((score) => score.name)).toEqual(['first', 'second']);
    expect(matcher.best('send the report', new Set(['second']))?.name).toBe('second');
    expect(matcher.best('nothing relevant')).toBeUndefined();
  });

  it('tests regular expressions the same way on every call, even with the g flag', () => {
    const matcher = new KeywordMatcher([{ name: 'math', patterns: [/\d\s*\+\s*\d/g] }]);
    const results = Array.from({ length: 4 }, () => matcher.best('what is 2 + 2')?.score);
    expect(results).toEqual([2, 2, 2, 2]);
  });

  it('rejects a keyword with nothing to match, at construction', () => {
    expect(() => new KeywordMatcher([{ name: 'a', keywords: ['   '] }])).toThrow(ConfigurationError);
    expect(() => new KeywordMatcher([{ name: 'a', keywords: ['ok', ''] }])).toThrow(/Keyword "" of 'a'/);
  });
});
