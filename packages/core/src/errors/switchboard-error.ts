// One symbol shared by every copy of the package (`Symbol.for`), so `isInstance` recognises errors across copies.
const MARKER = Symbol.for('switchboard.error');

/** Whether an error is the caller's fault (bad input, unknown session) or the system's. */
export type ErrorKind = 'user' | 'system';

/** Options every Switchboard error accepts. */
export interface SwitchboardErrorOptions {
  /** The human-readable message. */
  message: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The base of every error Switchboard throws or returns.
 *
 * `name` is the concrete class name. Recognise errors with the static
 * `isInstance()` rather than `instanceof`: it works across duplicated copies of
 * the package, because it checks a `Symbol.for` marker and the class names
 * recorded on the instance.
 *
 * @example
 * ```ts
 * if (ValidationError.isInstance(error)) console.log(error.message);
 * ```
 */
export abstract class SwitchboardError extends Error {
  /** `'user'` for errors caused by the caller's input, `'system'` otherwise. */
  abstract readonly kind: ErrorKind;
  /** A stable machine-readable code, e.g. `validation_error`. */
  abstract readonly code: string;
  /**
   * True when trying the same thing again may succeed (a timeout, a remote
   * agent's 5xx or lost connection): a strategy profile's agent retries
   * apply only to these. False for everything the caller must change first.
   */
  get retryable(): boolean {
    return false;
  }
  /** @internal class names from the concrete class up to `SwitchboardError`. */
  readonly [MARKER]: readonly string[];

  constructor({ message, cause }: SwitchboardErrorOptions) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    const names: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) {
      names.push((c as { name: string }).name);
    }
    this[MARKER] = names;
  }

  /** True when `value` is an instance of this class (or a subclass), from any copy of the package. */
  static isInstance(value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return false;
    const names = (value as { [MARKER]?: unknown })[MARKER];
    // `this` is the class it is called on (a subclass checks its own name); a detached call checks the base.
    // biome-ignore lint/complexity/noThisInStatic: the receiver is what makes `ValidationError.isInstance` specific.
    const name = typeof this === 'function' ? this.name : 'SwitchboardError';
    return Array.isArray(names) && names.includes(name);
  }
}
