import { defineAgent } from '@switchboard/runtime';
import { z } from 'zod';
import { UnitsSchema } from './profile.js';

/** Greets the user by the name the orchestrator passes as `input.name`. */
export const greeter = defineAgent({
  name: 'greeter',
  description: 'Greets the user by name',
  run(_message, { toolCall }) {
    const { name } = z.object({ name: z.string().min(1) }).parse(toolCall.input);
    return `Nice to meet you, ${name}!`;
  },
});

/** Today's readings of the cities the weather agent knows (offline, so the example runs anywhere). */
export const READINGS: Readonly<Record<string, { celsius: number; sky: string }>> = {
  paris: { celsius: 18, sky: 'light rain' },
  oslo: { celsius: 4, sky: 'snow' },
  cairo: { celsius: 31, sky: 'sunny' },
  tokyo: { celsius: 22, sky: 'cloudy' },
};

const capitalise = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * Reports the weather of a known city named in the message, in the units the
 * orchestrator passes as `input.units` (metric when absent).
 */
export const weather = defineAgent({
  name: 'weather',
  description: 'Reports the weather in Paris, Oslo, Cairo or Tokyo',
  run(message, { toolCall }) {
    const { units } = z.object({ units: UnitsSchema.default('metric') }).parse(toolCall.input ?? {});
    const city = Object.keys(READINGS).find((name) => new RegExp(`\\b${name}\\b`, 'i').test(message));
    const reading = city ? READINGS[city] : undefined;
    if (!city || !reading) {
      return `I only know the weather in ${Object.keys(READINGS).map(capitalise).join(', ')}.`;
    }
    const temperature =
      units === 'imperial' ? `${Math.round((reading.celsius * 9) / 5 + 32)} °F` : `${reading.celsius} °C`;
    return `${capitalise(city)}: ${temperature}, ${reading.sky}.`;
  },
});
