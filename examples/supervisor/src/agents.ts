import { type Agent, defineAgent } from '@switchboard/runtime';
import { CITIES, type City, findCity, type SimulatedTravelServices } from './travel-services.js';

const NO_CITY = `Which city? I know ${CITIES.map((city) => city.name).join(', ')}.`;

/**
 * The travel desk's three agents, each asking one service: `flights`,
 * `hotels` and `weather`. Each reads the city from its task; a service that
 * is down makes the agent fail, which the supervisor reports as missing.
 */
export function travelAgents(services: SimulatedTravelServices): Agent[] {
  /** An agent that needs a city from its task and answers with `answer(city)`. */
  const cityAgent = (
    name: string,
    description: string,
    answer: (city: City, signal: AbortSignal) => Promise<string>,
  ) =>
    defineAgent({
      name,
      description,
      async run(message, { signal }) {
        const city = findCity(message);
        return city ? answer(city, signal) : NO_CITY;
      },
    });

  return [
    cityAgent('flights', 'Finds flights to a city for a weekend trip', async (city, signal) => {
      const flights = await services.flights(city, signal);
      return `Flights to ${city.name}: ${flights.join('; ')}.`;
    }),
    cityAgent('hotels', 'Finds hotels in a city for a weekend', async (city, signal) => {
      const hotels = await services.hotels(city, signal);
      return `Hotels in ${city.name}: ${hotels.join('; ')}.`;
    }),
    cityAgent('weather', "Gives a city's weather forecast for the weekend", async (city, signal) => {
      const forecast = await services.forecast(city, signal);
      return `Weekend weather in ${city.name}: ${forecast}.`;
    }),
  ];
}
