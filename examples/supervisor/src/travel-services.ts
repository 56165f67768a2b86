import { setTimeout as delay } from 'node:timers/promises';

/** What the travel desk knows about one city, so that the example runs anywhere without a booking API. */
export interface City {
  name: string;
  flights: readonly string[];
  hotels: readonly string[];
  forecast: string;
}

/** The cities the desk can plan for. */
export const CITIES: readonly City[] = [
  {
    name: 'Rome',
    flights: ['Fri 08:10 → FCO, 189.00', 'Fri 18:45 → FCO, 142.00'],
    hotels: ['Hotel Campo, Trastevere, 135.00 a night', 'Roma Termini Suites, 98.00 a night'],
    forecast: 'sunny, 24 °C on Saturday and 22 °C on Sunday',
  },
  {
    name: 'Lisbon',
    flights: ['Fri 07:30 → LIS, 121.00', 'Fri 16:20 → LIS, 96.00'],
    hotels: ['Casa Alfama, 110.00 a night', 'Baixa Flats, 84.00 a night'],
    forecast: 'windy and 19 °C on Saturday, showers on Sunday',
  },
  {
    name: 'Oslo',
    flights: ['Fri 09:05 → OSL, 164.00'],
    hotels: ['Fjord Lodge, 149.00 a night'],
    forecast: 'cloudy, 8 °C all weekend',
  },
];

/** The first city of {@link CITIES} named in `text`, if any. */
export function findCity(text: string): City | undefined {
  return CITIES.find((city) => new RegExp(`\\b${city.name}\\b`, 'i').test(text));
}

/** The booking services the agents ask. */
export type TravelService = 'flights' | 'hotels' | 'weather';

/** One request to a service, with when it started and ended (`performance.now()`). */
export interface ServiceCall {
  service: TravelService;
  city: string;
  startedAt: number;
  endedAt?: number;
  failed?: boolean;
}

/** Options of {@link SimulatedTravelServices}. */
export interface SimulatedTravelServicesOptions {
  /** How long each request takes, like a remote API would (default 200 ms). */
  latencyMs?: number;
  /** Services that are down: their requests fail after the latency (default none). */
  down?: Iterable<TravelService>;
}

/**
 * Flight search, hotel search and a weather service answering from
 * {@link CITIES} after a short delay. Like a real client it records every
 * request it made, so that a test (or the demo's log) sees when each one ran.
 */
export class SimulatedTravelServices {
  /** Every request made, in the order they started. */
  readonly calls: ServiceCall[] = [];
  readonly #latencyMs: number;
  readonly #down: ReadonlySet<TravelService>;

  constructor({ latencyMs = 200, down = [] }: SimulatedTravelServicesOptions = {}) {
    this.#latencyMs = latencyMs;
    this.#down = new Set(down);
  }

  /** The flights to `city`. */
  flights(city: City, signal?: AbortSignal): Promise<readonly string[]> {
    return this.#request('flights', city, signal, () => city.flights);
  }

  /** The hotels in `city`. */
  hotels(city: City, signal?: AbortSignal): Promise<readonly string[]> {
    return this.#request('hotels', city, signal, () => city.hotels);
  }

  /** The weekend forecast of `city`. */
  forecast(city: City, signal?: AbortSignal): Promise<string> {
    return this.#request('weather', city, signal, () => city.forecast);
  }

  async #request<T>(service: TravelService, city: City, signal: AbortSignal | undefined, answer: () => T) {
    const call: ServiceCall = { service, city: city.name, startedAt: performance.now() };
    this.calls.push(call);
    try {
      await delay(this.#latencyMs, undefined, signal ? { signal } : undefined);
      if (this.#down.has(service)) throw new Error(`the ${service} service is unavailable (HTTP 503)`);
      return answer();
    } catch (error) {
      call.failed = true;
      throw error;
    } finally {
      call.endedAt = performance.now();
    }
  }
}
