import { llmTool } from '@switchboard/runtime';
import { z } from 'zod';

/** Today's readings, in °C: a static table so the example runs without a weather service. */
export const WEATHER: Readonly<Record<string, { celsius: number; conditions: string }>> = {
  paris: { celsius: 18, conditions: 'light rain' },
  oslo: { celsius: 4, conditions: 'snow' },
  cairo: { celsius: 31, conditions: 'sunny' },
  tokyo: { celsius: 22, conditions: 'cloudy' },
};

const capitalise = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * The `get_weather` tool of the weather agent. Its zod schema becomes the
 * OpenAI function definition the model sees and validates the model's
 * arguments; an unknown city throws, and the error goes back to the model
 * as the tool result.
 */
export const getWeather = llmTool({
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: z.object({
    city: z.string().min(1).describe('City name, e.g. Paris'),
    units: z.enum(['celsius', 'fahrenheit']).default('celsius').describe('Temperature units'),
  }),
  execute({ city, units }) {
    const reading = WEATHER[city.trim().toLowerCase()];
    if (!reading) {
      throw new Error(
        `no weather data for ${city}; known cities: ${Object.keys(WEATHER).map(capitalise).join(', ')}`,
      );
    }
    const temperature = units === 'fahrenheit' ? Math.round((reading.celsius * 9) / 5 + 32) : reading.celsius;
    return {
      city: capitalise(city.trim().toLowerCase()),
      temperature,
      units,
      conditions: reading.conditions,
    };
  },
});
