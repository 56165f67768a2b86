/**
 * The second process of the interop example: a Switchboard app served as an
 * A2A agent (`a2a: true`), so that any A2A client (another Switchboard app
 * through `a2aAgent`, Google's ADK, Strands Agents…) can call it. It
 * answers travel questions offline: the weather of a few cities.
 *
 * `pnpm --filter @switchboard/example-interop a2a-agent`; `PORT` (default
 * 3001) and `HOST` (default 127.0.0.1) say where it listens, `A2A_PUBLIC_URL`
 * the URL its agent card announces when a proxy stands in front of it.
 *
 * @module
 */

import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, defineAgent } from '@switchboard/runtime';

const FORECASTS: Readonly<Record<string, string>> = {
  lisbon: 'sunny, 24 °C',
  oslo: 'light snow, -3 °C',
  tokyo: 'cloudy, 18 °C',
};

/** Reads a city out of the message and tells its (canned) weather. */
const weather = defineAgent({
  name: 'weather',
  description: 'Tells the weather in Lisbon, Oslo or Tokyo',
  keywords: ['weather', 'forecast', 'temperature'],
  run: (message) => {
    const city = Object.keys(FORECASTS).find((name) => message.toLowerCase().includes(name));
    if (!city) return `I know the weather in ${Object.keys(FORECASTS).join(', ')} only.`;
    return `Weather in ${city[0]!.toUpperCase()}${city.slice(1)}: ${FORECASTS[city]}.`;
  },
});

const { PORT = '3001', HOST = '127.0.0.1', A2A_PUBLIC_URL } = process.env;
const app = new App({
  name: 'travel-desk',
  agents: [weather],
  a2a: {
    ...(A2A_PUBLIC_URL ? { publicUrl: A2A_PUBLIC_URL } : {}),
    card: { description: 'Answers travel questions: the weather in Lisbon, Oslo and Tokyo.' },
  },
});
const router = new KeywordOrchestrator({
  name: 'travel-desk',
  agents: app.agentMetas,
  fallbackAgent: 'weather',
});
const server = await app.start(router, { port: Number(PORT), host: HOST });
console.log(`A2A agent listening on ${server.url} (card: ${server.url}/.well-known/agent-card.json)`);
process.once('SIGINT', () => void server.close());
process.once('SIGTERM', () => void server.close());
