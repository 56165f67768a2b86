import { ValidationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import { convert } from './convert.js';

/**
 * The unit converter agent: length, mass, temperature, volume, speed and
 * data sizes, from "convert 5 km to miles", "72 fahrenheit in celsius" or
 * "how many ounces in 2 lb". Unknown or incompatible units are explained.
 */
export const converterAgent: Agent = defineAgent({
  name: 'converter',
  description:
    'Converts units of length (mm, cm, m, km, in, ft, yd, mi), mass (g, kg, lb, oz), temperature (°C, °F, K), volume (ml, l, gal, cup), speed (km/h, mph, m/s) and data (B, KB, MB, GB, TB).',
  // Unit names rather than "in" or "to", which would pull in unrelated messages.
  keywords: [
    'convert',
    'conversion',
    'km',
    'kilometers',
    'kilometres',
    'miles',
    'meters',
    'metres',
    'cm',
    'mm',
    'inches',
    'feet',
    'yards',
    'kg',
    'kilograms',
    'grams',
    'pounds',
    'lb',
    'lbs',
    'ounces',
    'oz',
    'celsius',
    'fahrenheit',
    'kelvin',
    'liters',
    'litres',
    'ml',
    'gallons',
    'cups',
    'mph',
    'km/h',
    'kph',
    'bytes',
    'kb',
    'mb',
    'gb',
    'tb',
    'kilobytes',
    'megabytes',
    'gigabytes',
    'terabytes',
  ],
  metadata: { examples: ['convert 5 km to miles', '72 fahrenheit in celsius', 'how many ounces in 2 lb'] },
  run(message) {
    try {
      return convert(message).text;
    } catch (error) {
      if (ValidationError.isInstance(error))
        return `Sorry, I could not convert that: ${(error as Error).message}.`;
      throw error;
    }
  },
});
