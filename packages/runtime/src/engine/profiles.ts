import {
  BUILT_IN_PROFILES,
  ConfigurationError,
  type ConfigView,
  type StrategyProfile,
  type TurnLimits,
  ValidationError,
} from '@switchboard/core';

const WHOLE_NUMBERS = [
  ['maxHops', 1],
  ['agentRetries', 0],
  ['retryBaseDelayMs', 0],
  ['retryMaxDelayMs', 0],
  ['maxReplans', 0],
  ['maxRounds', 1],
] as const;

/**
 * The app's strategy profiles, resolved once: the built-in ones and the
 * app's own (each limit it leaves out taken from `fallback`), the one
 * turns use by default, and those a request may ask for.
 */
export class Profiles {
  readonly #byName: ReadonlyMap<string, TurnLimits>;
  readonly #custom: Readonly<Record<string, StrategyProfile>>;
  readonly #defaultProfile: string | undefined;
  readonly #requestProfiles: readonly string[] | undefined;
  /** The profiles with each configuration's `profile` items, made once per configuration. */
  readonly #configured = new WeakMap<ConfigView, Profiles>();
  /** The limits of a turn that asks for none; undefined when the app has no default profile. */
  readonly default: TurnLimits | undefined;
  /** The profiles a request may ask for (`metadata.profile`). */
  readonly #requestable: ReadonlySet<string>;

  /** @param requestProfiles - what a request may ask for: by default every profile, or only the default one when there is one. */
  constructor(
    custom: Readonly<Record<string, StrategyProfile>> = {},
    defaultProfile?: string,
    requestProfiles?: readonly string[],
  ) {
    this.#custom = custom;
    this.#defaultProfile = defaultProfile;
    this.#requestProfiles = requestProfiles;
    const byName = new Map<string, TurnLimits>(Object.entries(BUILT_IN_PROFILES));
    for (const [name, profile] of Object.entries(custom)) byName.set(name, resolve(name, profile));
    this.#byName = byName;
    if (defaultProfile !== undefined && !byName.has(defaultProfile)) {
      throw new ConfigurationError({
        message: `The default profile '${defaultProfile}' is not one of the app's profiles: ${[...byName.keys()].join(', ')}`,
      });
    }
    this.default = defaultProfile === undefined ? undefined : byName.get(defaultProfile);
    this.#requestable = new Set(
      requestProfiles ?? (defaultProfile === undefined ? this.names : [defaultProfile]),
    );
    for (const name of this.#requestable) {
      if (!byName.has(name))
        throw new ConfigurationError({
          message: `requestProfiles names '${name}', which is not one of the app's profiles: ${this.names.join(', ')}`,
        });
    }
  }

  /**
   * These profiles with the configuration's `profile` items over them (an
   * item replaces the profile of its name, or adds one); these profiles
   * themselves when it has none.
   */
  withConfig(config: ConfigView): Profiles {
    const items = config.items('profile');
    if (items.size === 0) return this;
    let configured = this.#configured.get(config);
    if (!configured) {
      const custom = { ...this.#custom, ...(Object.fromEntries(items) as Record<string, StrategyProfile>) };
      configured = new Profiles(custom, this.#defaultProfile, this.#requestProfiles);
      this.#configured.set(config, configured);
    }
    return configured;
  }

  /** The limits a new turn runs under: the profile its request asks for (`asked`, only a requestable one), else the default. */
  forRequest(asked: unknown): TurnLimits | undefined {
    if (asked === undefined) return this.default;
    const limits = typeof asked === 'string' && this.#requestable.has(asked) ? this.get(asked) : undefined;
    if (!limits)
      throw new ValidationError({
        message: `metadata.profile must be one of: ${[...this.#requestable].join(', ')}`,
      });
    return limits;
  }

  /** The limits of profile `name`, or undefined when the app has no such profile. */
  get(name: string): TurnLimits | undefined {
    return this.#byName.get(name);
  }

  /** The names a request or a router may choose from. */
  get names(): string[] {
    return [...this.#byName.keys()];
  }
}

function resolve(name: string, profile: StrategyProfile): TurnLimits {
  if (typeof profile !== 'object' || profile === null)
    throw new ConfigurationError({ message: `Profile '${name}' must be an object of limits` });
  for (const [key, least] of WHOLE_NUMBERS) {
    const value = profile[key];
    if (value !== undefined && (!Number.isInteger(value) || value < least))
      throw new ConfigurationError({
        message: `Profile '${name}': ${key} must be an integer of at least ${least}, got ${value}`,
      });
  }
  for (const key of ['turnTimeoutMs', 'agentTimeoutMs'] as const) {
    const value = profile[key];
    if (value !== undefined && (!Number.isInteger(value) || value <= 0))
      throw new ConfigurationError({
        message: `Profile '${name}': ${key} must be a positive integer of milliseconds, got ${value}`,
      });
  }
  if (profile.onLimit !== undefined && profile.onLimit !== 'partial' && profile.onLimit !== 'error')
    throw new ConfigurationError({ message: `Profile '${name}': onLimit must be 'partial' or 'error'` });
  return { ...BUILT_IN_PROFILES.fallback, ...profile, profile: name };
}
