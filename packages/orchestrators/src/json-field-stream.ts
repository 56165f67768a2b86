/**
 * Reads a JSON object as a model writes it, piece by piece, and gives back
 * the decoded text of one top-level string field as it arrives, so that an
 * answer inside a structured reply can be streamed before the reply ends.
 * Everything before the field (the fields a model writes first) is passed to
 * `when`, parsed, once the field starts: the text is given only when it says
 * yes (e.g. "no sub-goals, so this answer is final"). The text given is the
 * value trimmed, as answers are: white space at either end is never sent.
 *
 * @example
 * ```ts
 * const field = new JsonFieldStream('answer');
 * field.push('{"thought":"ok","answer":"Hel'); // 'Hel'
 * field.push('lo\\n"}'); // 'lo\n'
 * ```
 */
export class JsonFieldStream {
  readonly #field: string;
  readonly #when: ((before: Record<string, unknown>) => boolean) | undefined;
  #text = '';
  #depth = 0;
  #inString = false;
  #escape = false;
  /** Whether the string being read at depth 1 is a key, and where it started. */
  #readingKey = false;
  #keyStart = -1;
  #expectKey = false;
  #lastKey: string | undefined;
  #lastKeyStart = -1;
  #afterColon = false;
  /** Inside the field's value: its escape state, and a pending high surrogate. */
  #inField = false;
  #fieldDone = false;
  #gated = false;
  #unicode: string | undefined;
  #highSurrogate: string | undefined;
  #started = false;
  #space = '';

  constructor(field: string, when?: (before: Record<string, unknown>) => boolean) {
    this.#field = field;
    this.#when = when;
  }

  /** True once the field's value has started and `when` allowed it. */
  get streaming(): boolean {
    return this.#inField && !this.#gated;
  }

  /** Reads the next piece of the reply; returns the field's newly decoded text ('' when none). */
  push(piece: string): string {
    let out = '';
    for (const char of piece) {
      const index = this.#text.length;
      this.#text += char;
      if (this.#fieldDone) continue;
      if (this.#inField) {
        out += this.#fieldChar(char);
        continue;
      }
      if (this.#inString) {
        if (this.#escape) this.#escape = false;
        else if (char === '\\') this.#escape = true;
        else if (char === '"') {
          this.#inString = false;
          if (this.#readingKey) {
            this.#readingKey = false;
            this.#lastKey = JSON.parse(this.#text.slice(this.#keyStart)) as string;
            this.#lastKeyStart = this.#keyStart;
          }
        }
        continue;
      }
      if (char === '"') {
        if (this.#depth === 1 && this.#expectKey) {
          this.#readingKey = true;
          this.#keyStart = index;
          this.#expectKey = false;
        } else if (this.#depth === 1 && this.#afterColon && this.#lastKey === this.#field) {
          this.#afterColon = false;
          this.#inField = true;
          this.#gated = !this.#allowed();
          continue;
        }
        this.#afterColon = false;
        this.#inString = true;
      } else if (char === '{' || char === '[') {
        this.#depth += 1;
        if (this.#depth === 1 && char === '{') this.#expectKey = true;
        this.#afterColon = false;
      } else if (char === '}' || char === ']') {
        this.#depth -= 1;
      } else if (this.#depth === 1 && char === ',') {
        this.#expectKey = true;
      } else if (this.#depth === 1 && char === ':') {
        this.#afterColon = true;
      } else if (!/\s/.test(char)) {
        this.#afterColon = false;
      }
    }
    return this.#gated ? '' : out;
  }

  #allowed(): boolean {
    if (!this.#when) return true;
    const before = this.#text.slice(0, this.#lastKeyStart).replace(/,\s*$/, '');
    try {
      const parsed: unknown = JSON.parse(`${before}}`);
      return typeof parsed === 'object' && parsed !== null && this.#when(parsed as Record<string, unknown>);
    } catch {
      return false;
    }
  }

  /** Decodes one character of the field's string value. */
  #fieldChar(char: string): string {
    if (this.#unicode !== undefined) {
      this.#unicode += char;
      if (this.#unicode.length < 4) return '';
      const unit = String.fromCharCode(Number.parseInt(this.#unicode, 16));
      this.#unicode = undefined;
      return this.#unit(unit);
    }
    if (this.#escape) {
      this.#escape = false;
      if (char === 'u') {
        this.#unicode = '';
        return '';
      }
      return this.#unit(ESCAPES[char] ?? char);
    }
    if (char === '\\') {
      this.#escape = true;
      return '';
    }
    if (char === '"') {
      this.#inField = false;
      this.#fieldDone = true;
      return '';
    }
    return this.#unit(char);
  }

  /** Holds a high surrogate until its pair arrives, so no half character is given out. */
  #unit(text: string): string {
    const code = text.charCodeAt(0);
    if (text.length === 1 && code >= 0xd800 && code <= 0xdbff) {
      this.#highSurrogate = text;
      return '';
    }
    const pending = this.#highSurrogate ?? '';
    this.#highSurrogate = undefined;
    return this.#trimmed(pending + text);
  }

  /** The text as the trimmed value reads: leading white space dropped, trailing white space held until more text follows. */
  #trimmed(text: string): string {
    if (/^\s+$/.test(text)) {
      if (this.#started) this.#space += text;
      return '';
    }
    const out = this.#started ? this.#space + text : text;
    this.#started = true;
    this.#space = '';
    return out;
  }
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };
