import { NATIVE_CITY_NAMES } from './native-city-names.js';

/** A time zone found in a message, with the place as the user named it. */
export interface ResolvedPlace {
  /** An IANA time zone id accepted by `Intl`, e.g. `Asia/Tokyo`. */
  timeZone: string;
  /** The place for display, e.g. `Tokyo`, `New York`, `UTC`. */
  place: string;
}

/** Cities people ask about whose name is not an IANA zone name, and common abbreviations. */
const CITIES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    utc: 'UTC',
    gmt: 'UTC',
    osaka: 'Asia/Tokyo',
    kyoto: 'Asia/Tokyo',
    beijing: 'Asia/Shanghai',
    shenzhen: 'Asia/Shanghai',
    mumbai: 'Asia/Kolkata',
    delhi: 'Asia/Kolkata',
    'new delhi': 'Asia/Kolkata',
    bangalore: 'Asia/Kolkata',
    bengaluru: 'Asia/Kolkata',
    kolkata: 'Asia/Kolkata',
    chennai: 'Asia/Kolkata',
    'abu dhabi': 'Asia/Dubai',
    'cape town': 'Africa/Johannesburg',
    manchester: 'Europe/London',
    edinburgh: 'Europe/London',
    munich: 'Europe/Berlin',
    frankfurt: 'Europe/Berlin',
    hamburg: 'Europe/Berlin',
    barcelona: 'Europe/Madrid',
    milan: 'Europe/Rome',
    geneva: 'Europe/Zurich',
    kyiv: 'Europe/Kyiv',
    'st petersburg': 'Europe/Moscow',
    nyc: 'America/New_York',
    boston: 'America/New_York',
    washington: 'America/New_York',
    miami: 'America/New_York',
    atlanta: 'America/New_York',
    philadelphia: 'America/New_York',
    montreal: 'America/Toronto',
    dallas: 'America/Chicago',
    houston: 'America/Chicago',
    austin: 'America/Chicago',
    la: 'America/Los_Angeles',
    'san francisco': 'America/Los_Angeles',
    seattle: 'America/Los_Angeles',
    'las vegas': 'America/Los_Angeles',
    'san diego': 'America/Los_Angeles',
    rio: 'America/Sao_Paulo',
    'rio de janeiro': 'America/Sao_Paulo',
    wellington: 'Pacific/Auckland',
    hawaii: 'Pacific/Honolulu',
    california: 'America/Los_Angeles',
    uk: 'Europe/London',
    england: 'Europe/London',
    ireland: 'Europe/Dublin',
    france: 'Europe/Paris',
    germany: 'Europe/Berlin',
    spain: 'Europe/Madrid',
    italy: 'Europe/Rome',
    netherlands: 'Europe/Amsterdam',
    switzerland: 'Europe/Zurich',
    sweden: 'Europe/Stockholm',
    norway: 'Europe/Oslo',
    finland: 'Europe/Helsinki',
    poland: 'Europe/Warsaw',
    greece: 'Europe/Athens',
    turkey: 'Europe/Istanbul',
    iceland: 'Atlantic/Reykjavik',
    egypt: 'Africa/Cairo',
    israel: 'Asia/Jerusalem',
    japan: 'Asia/Tokyo',
    korea: 'Asia/Seoul',
    'south korea': 'Asia/Seoul',
    china: 'Asia/Shanghai',
    india: 'Asia/Kolkata',
    thailand: 'Asia/Bangkok',
    vietnam: 'Asia/Ho_Chi_Minh',
    indonesia: 'Asia/Jakarta',
    philippines: 'Asia/Manila',
    'new zealand': 'Pacific/Auckland',
  }),
);

/** IANA city names that are everyday words; never read them as places. */
const NOT_PLACES = new Set(['christmas', 'easter', 'center', 'wake', 'oral', 'resolute', 'troll', 'marengo']);

/** Places written in capitals. */
const ABBREVIATIONS = new Set(['utc', 'gmt', 'nyc', 'la', 'uk']);

/**
 * Big cities that are also IANA zone names, recognised anywhere in a message
 * ("tokyo time"). Every other zone's city is recognised after "in", "at" or
 * "for" only, so that a word like "Nome" or "Regina" elsewhere is not a place.
 */
const WELL_KNOWN = [
  'tokyo',
  'seoul',
  'shanghai',
  'hong kong',
  'taipei',
  'singapore',
  'bangkok',
  'jakarta',
  'manila',
  'karachi',
  'dubai',
  'tehran',
  'istanbul',
  'moscow',
  'cairo',
  'lagos',
  'nairobi',
  'johannesburg',
  'london',
  'dublin',
  'paris',
  'berlin',
  'madrid',
  'rome',
  'amsterdam',
  'brussels',
  'zurich',
  'vienna',
  'stockholm',
  'oslo',
  'copenhagen',
  'helsinki',
  'warsaw',
  'prague',
  'athens',
  'lisbon',
  'reykjavik',
  'new york',
  'toronto',
  'chicago',
  'denver',
  'los angeles',
  'vancouver',
  'mexico city',
  'sao paulo',
  'buenos aires',
  'lima',
  'bogota',
  'sydney',
  'melbourne',
  'brisbane',
  'perth',
  'auckland',
  'honolulu',
];

/** The zone a string names, if `Intl` accepts it, in its canonical spelling. */
export function validTimeZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

let zonesByCity: Map<string, string> | undefined;

/** `tokyo` → `Asia/Tokyo`, `new york` → `America/New_York`, from the zones `Intl` supports. */
function zoneOfCity(city: string): string | undefined {
  if (!zonesByCity) {
    zonesByCity = new Map();
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const city = zone.split('/').pop()?.replaceAll('_', ' ').toLowerCase();
      if (city && !NOT_PLACES.has(city)) zonesByCity.set(city, zone);
    }
  }
  const plain = withoutAccents(city);
  return (
    CITIES.get(city) ??
    NATIVE_CITY_NAMES.get(city) ??
    zonesByCity.get(city) ??
    CITIES.get(plain) ??
    zonesByCity.get(plain)
  );
}

/** `são paulo` → `sao paulo`, `zürich` → `zurich`; other scripts stay as written (`東京`, `москва`). */
function withoutAccents(text: string): string {
  return text
    .normalize('NFD')
    .replace(/(?<=[a-z])\p{M}+/gu, '')
    .normalize('NFC');
}

/** A place as people write it: `New York`, `São Paulo`, `Москва`, `東京`, `UK`. */
export function displayName(text: string): string {
  return ABBREVIATIONS.has(text)
    ? text.toUpperCase()
    : text.replace(
        /(^|[\s/-])(\p{Ll})/gu,
        (_, separator: string, letter: string) => separator + letter.toUpperCase(),
      );
}

/**
 * Looks up a place or a zone id: `Tokyo`, `new york`, `UTC`,
 * `Europe/Paris`. Returns `undefined` when it names no known zone.
 */
export function resolvePlace(name: string): ResolvedPlace | undefined {
  const key = name.normalize('NFC').trim().toLowerCase().replace(/\s+/g, ' ');
  if (key.length === 0 || key.length > 60) return undefined;
  if (key.includes('/')) {
    const timeZone = validTimeZone(key);
    return timeZone ? { timeZone, place: timeZone } : undefined;
  }
  const timeZone = zoneOfCity(key);
  return timeZone ? { timeZone, place: displayName(key) } : undefined;
}

/** What {@link findPlace} found: a zone, a place that names no zone, or nothing. */
export type PlaceLookup = ResolvedPlace | { unknown: string } | undefined;

const FILLER = /\s*\b(?:right now|now|today|tonight|please|currently|exactly)\b/g;
const ZONE_ID = /\b[a-z]+(?:\/[a-z0-9_+-]+){1,2}\b/i;
/** The words after the last "in", "at" or "for", in any script: "time in 東京", "time in são paulo". */
const AFTER_PREPOSITION = /\b(?:in|at|for)\s+(\p{L}[\p{L}\p{M} .'-]*?)\s*[?.!？。！]*$/u;

/**
 * Finds the place a message asks about: an IANA id anywhere, then the words
 * after the last "in", "at" or "for" (in any script: "東京", "Москва",
 * "São Paulo"), then a well-known city anywhere.
 * A place after "in" that names no zone comes back as `{ unknown }` so the
 * user can be told; words with digits ("in 3 days") are not places.
 */
export function findPlace(message: string): PlaceLookup {
  const text = message.toLowerCase();
  const zoneId = ZONE_ID.exec(text)?.[0];
  if (zoneId) return resolvePlace(zoneId) ?? { unknown: zoneId };
  const after = AFTER_PREPOSITION.exec(text.replace(FILLER, ''))?.[1]?.trim();
  if (after) {
    const place = resolvePlace(after.replace(/^the\s+/, ''));
    if (place) return place;
  }
  const plain = withoutAccents(text);
  for (const city of [...CITIES.keys(), ...WELL_KNOWN]) {
    if (new RegExp(`\\b${city}\\b`).test(plain)) return resolvePlace(city);
  }
  // Scripts without spaces between words ("東京の時間") have no word boundaries to look for.
  for (const city of NATIVE_CITY_NAMES.keys()) if (text.includes(city)) return resolvePlace(city);
  return after ? { unknown: after } : undefined;
}

/**
 * The places to suggest when a message names one the clock does not know:
 * `I know: Tokyo, Seoul, …, and any city or zone id of the IANA time zone database, such as Europe/Paris`.
 */
export function describeKnownPlaces(): string {
  return `${WELL_KNOWN.map(displayName).join(', ')}, and any city or zone id of the IANA time zone database, such as Kolkata or Europe/Paris`;
}
