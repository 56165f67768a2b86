/** A source of numbers in [0, 1), the same sequence for the same seed. */
export type Random = () => number;

/**
 * mulberry32: a small, fast 32-bit generator, good enough to pick delays and
 * faults. `stream` names an independent sequence of the same seed, so that
 * what one part of the simulation draws does not shift what another draws.
 */
export function seededRandom(seed: number, stream = ''): Random {
  let state = seed >>> 0;
  for (const character of stream) state = Math.imul(state ^ character.charCodeAt(0), 0x9e3779b1) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A whole number in [min, max]. */
export function between(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** True with probability `chance`. */
export function chance(random: Random, probability: number): boolean {
  return random() < probability;
}

/** One of `items`. */
export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** A new independent sequence, seeded from `random`'s next number (for work that runs concurrently). */
export function fork(random: Random): Random {
  return seededRandom(Math.floor(random() * 4_294_967_296));
}
