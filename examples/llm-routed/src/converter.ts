import { defineAgent } from '@switchboard/runtime';

interface Conversion {
  to: string;
  convert: (value: number) => number;
}

// Each unit converts to its counterpart; the aliases map what people type onto these keys.
const CONVERSIONS: Readonly<Record<string, Conversion>> = {
  km: { to: 'mi', convert: (km) => km / 1.609344 },
  mi: { to: 'km', convert: (miles) => miles * 1.609344 },
  kg: { to: 'lb', convert: (kg) => kg / 0.45359237 },
  lb: { to: 'kg', convert: (pounds) => pounds * 0.45359237 },
  '°C': { to: '°F', convert: (celsius) => (celsius * 9) / 5 + 32 },
  '°F': { to: '°C', convert: (fahrenheit) => ((fahrenheit - 32) * 5) / 9 },
};

const ALIASES: Readonly<Record<string, string>> = {
  km: 'km',
  kilometer: 'km',
  kilometers: 'km',
  kilometre: 'km',
  kilometres: 'km',
  mi: 'mi',
  mile: 'mi',
  miles: 'mi',
  kg: 'kg',
  kilogram: 'kg',
  kilograms: 'kg',
  kilo: 'kg',
  kilos: 'kg',
  lb: 'lb',
  lbs: 'lb',
  pound: 'lb',
  pounds: 'lb',
  c: '°C',
  '°c': '°C',
  celsius: '°C',
  f: '°F',
  '°f': '°F',
  fahrenheit: '°F',
};

const QUANTITY = /(-?\d+(?:[.,]\d+)?)\s*(°?[a-z]+)/gi;

/** Rounds to at most two decimals without trailing zeros. */
const format = (value: number) => String(Math.round(value * 100) / 100);

/**
 * A plain (non-LLM) agent: converts the first quantity it recognises in the
 * message between km/mi, kg/lb and °C/°F, e.g. "convert 10 km to miles".
 */
export const converter = defineAgent({
  name: 'converter',
  description: 'Converts a quantity between km and miles, kg and pounds, or °C and °F',
  run(message) {
    for (const [, amount, word] of message.matchAll(QUANTITY)) {
      const unit = word ? ALIASES[word.toLowerCase()] : undefined;
      const conversion = unit ? CONVERSIONS[unit] : undefined;
      if (!amount || !unit || !conversion) continue;
      const value = Number(amount.replace(',', '.'));
      return `${format(value)} ${unit} = ${format(conversion.convert(value))} ${conversion.to}`;
    }
    throw new Error('no quantity with a known unit (km, mi, kg, lb, °C, °F) in the message');
  },
});
