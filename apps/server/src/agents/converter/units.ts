/** What a unit measures; only units of the same dimension convert into each other. */
export type Dimension = 'length' | 'mass' | 'temperature' | 'volume' | 'speed' | 'data';

/** A unit of measurement and how it relates to its dimension's base unit. */
export interface Unit {
  /** Short name: `km`, `lb`, `°C`, `km/h`. */
  symbol: string;
  dimension: Dimension;
  /** How a quantity is written for people: `1 mile`, `3 miles`, `20 °C`. */
  label: (value: number) => string;
  /** Lower-case names and abbreviations that mean this unit. */
  aliases: readonly string[];
  toBase: (value: number) => number;
  fromBase: (value: number) => number;
}

const plurals = (names: readonly string[]) => names.flatMap((name) => [name, `${name}s`]);

function linear(
  symbol: string,
  dimension: Dimension,
  factor: number,
  { singular, plural, aliases }: { singular?: string; plural?: string; aliases: readonly string[] },
): Unit {
  return {
    symbol,
    dimension,
    label: singular && plural ? (value) => (Math.abs(value) === 1 ? singular : plural) : () => symbol,
    aliases: [symbol.toLowerCase(), ...aliases],
    toBase: (value) => value * factor,
    fromBase: (value) => value / factor,
  };
}

function temperature(
  symbol: string,
  aliases: readonly string[],
  toKelvin: (value: number) => number,
  fromKelvin: (value: number) => number,
): Unit {
  return {
    symbol,
    dimension: 'temperature',
    label: () => symbol,
    aliases,
    toBase: toKelvin,
    fromBase: fromKelvin,
  };
}

/** Every unit the converter knows, grouped by dimension in display order. */
export const UNITS: readonly Unit[] = [
  linear('mm', 'length', 0.001, {
    singular: 'millimeter',
    plural: 'millimeters',
    aliases: plurals(['millimeter', 'millimetre']),
  }),
  linear('cm', 'length', 0.01, {
    singular: 'centimeter',
    plural: 'centimeters',
    aliases: plurals(['centimeter', 'centimetre']),
  }),
  linear('m', 'length', 1, { singular: 'meter', plural: 'meters', aliases: plurals(['meter', 'metre']) }),
  linear('km', 'length', 1000, {
    singular: 'kilometer',
    plural: 'kilometers',
    aliases: ['kms', ...plurals(['kilometer', 'kilometre'])],
  }),
  linear('in', 'length', 0.0254, { singular: 'inch', plural: 'inches', aliases: ['inch', 'inches'] }),
  linear('ft', 'length', 0.3048, { singular: 'foot', plural: 'feet', aliases: ['foot', 'feet'] }),
  linear('yd', 'length', 0.9144, {
    singular: 'yard',
    plural: 'yards',
    aliases: ['yds', ...plurals(['yard'])],
  }),
  linear('mi', 'length', 1609.344, { singular: 'mile', plural: 'miles', aliases: plurals(['mile']) }),
  linear('g', 'mass', 0.001, { singular: 'gram', plural: 'grams', aliases: plurals(['gram', 'gramme']) }),
  linear('kg', 'mass', 1, {
    singular: 'kilogram',
    plural: 'kilograms',
    aliases: ['kgs', ...plurals(['kilogram', 'kilo'])],
  }),
  linear('lb', 'mass', 0.45359237, {
    singular: 'pound',
    plural: 'pounds',
    aliases: ['lbs', ...plurals(['pound'])],
  }),
  linear('oz', 'mass', 0.028349523125, { singular: 'ounce', plural: 'ounces', aliases: plurals(['ounce']) }),
  temperature(
    '°C',
    ['c', 'celsius', 'centigrade'],
    (value) => value + 273.15,
    (kelvin) => kelvin - 273.15,
  ),
  temperature(
    '°F',
    ['f', 'fahrenheit'],
    (value) => ((value - 32) * 5) / 9 + 273.15,
    (kelvin) => ((kelvin - 273.15) * 9) / 5 + 32,
  ),
  temperature(
    'K',
    ['k', 'kelvin', 'kelvins'],
    (value) => value,
    (kelvin) => kelvin,
  ),
  linear('ml', 'volume', 0.001, {
    singular: 'milliliter',
    plural: 'milliliters',
    aliases: plurals(['milliliter', 'millilitre']),
  }),
  linear('l', 'volume', 1, { singular: 'liter', plural: 'liters', aliases: plurals(['liter', 'litre']) }),
  linear('gal', 'volume', 3.785411784, {
    singular: 'US gallon',
    plural: 'US gallons',
    aliases: plurals(['gallon']),
  }),
  linear('cup', 'volume', 0.2365882365, { singular: 'US cup', plural: 'US cups', aliases: ['cups'] }),
  linear('km/h', 'speed', 1 / 3.6, {
    aliases: [
      'kmh',
      'kph',
      'kmph',
      'km per hour',
      ...plurals(['kilometer', 'kilometre']).map((name) => `${name} per hour`),
    ],
  }),
  linear('mph', 'speed', 0.44704, { aliases: ['mi/h', 'mile per hour', 'miles per hour'] }),
  linear('m/s', 'speed', 1, {
    aliases: ['mps', 'm per second', ...plurals(['meter', 'metre']).map((name) => `${name} per second`)],
  }),
  linear('B', 'data', 1, { aliases: ['byte', 'bytes'] }),
  linear('KB', 'data', 1e3, { aliases: plurals(['kilobyte']) }),
  linear('MB', 'data', 1e6, { aliases: plurals(['megabyte']) }),
  linear('GB', 'data', 1e9, { aliases: plurals(['gigabyte']) }),
  linear('TB', 'data', 1e12, { aliases: plurals(['terabyte']) }),
];

const BY_ALIAS = new Map(UNITS.flatMap((unit) => unit.aliases.map((alias) => [alias, unit] as const)));

/** Finds a unit by any of its names or its symbol (`°C`), case-insensitively; `undefined` when unknown. */
export function findUnit(name: string): Unit | undefined {
  const key = name.replace(/°/g, '').trim().toLowerCase().replace(/\s+/g, ' ');
  return (
    BY_ALIAS.get(key) ?? (key.length > 2 && key.endsWith('s') ? BY_ALIAS.get(key.slice(0, -1)) : undefined)
  );
}

/** The known units of each dimension, for messages: `length (mm, cm, m, …)`. */
export function describeUnits(): string {
  const dimensions = [...new Set(UNITS.map((unit) => unit.dimension))];
  return dimensions
    .map((dimension) => {
      const symbols = UNITS.filter((unit) => unit.dimension === dimension).map((unit) => unit.symbol);
      return `${dimension} (${symbols.join(', ')})`;
    })
    .join(', ');
}
