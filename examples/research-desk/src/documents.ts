import type { RetrievalDocument } from '@switchboard/runtime';

/**
 * The desk's library: a few short notes on storing electricity for the
 * grid, each with a source. Ingested into the vector store at start-up.
 */
export const DOCUMENTS: readonly RetrievalDocument[] = [
  {
    id: 'pumped-hydro',
    source: 'notes/pumped-hydro.md',
    metadata: { topic: 'storage' },
    text:
      'Pumped hydro storage moves water uphill to a reservoir when power is cheap and lets it flow back ' +
      'through turbines when power is needed. Pumped hydro returns about 70 to 85 percent of the energy ' +
      'put in, and it holds the largest share of the grid storage in service worldwide.',
  },
  {
    id: 'lithium-batteries',
    source: 'notes/lithium-batteries.md',
    metadata: { topic: 'storage' },
    text:
      'Lithium-ion battery storage answers within milliseconds, which suits frequency regulation. ' +
      'Grid batteries return about 85 to 95 percent of the energy put in, but most systems hold only ' +
      'two to four hours of output.',
  },
  {
    id: 'hydrogen',
    source: 'notes/hydrogen.md',
    metadata: { topic: 'storage' },
    text:
      'Hydrogen storage splits water with surplus power and burns or converts the hydrogen later. ' +
      'It can hold energy for months, across seasons, but the round trip returns only 30 to 40 percent.',
  },
  {
    id: 'compressed-air',
    source: 'notes/compressed-air.md',
    metadata: { topic: 'storage' },
    text:
      'Compressed air storage pumps air into salt caverns and releases it through a turbine. ' +
      'Plants in Germany and Alabama have run since the 1970s and 1990s; efficiency is 40 to 70 percent.',
  },
  {
    id: 'flywheels',
    source: 'notes/flywheels.md',
    metadata: { topic: 'storage' },
    text:
      'Flywheel storage spins a rotor in a vacuum and can absorb or deliver power thousands of times a ' +
      'day, for seconds to minutes: flywheels smooth short swings rather than store energy for hours.',
  },
  {
    id: 'thermal',
    source: 'notes/thermal.md',
    metadata: { topic: 'storage' },
    text:
      'Thermal storage keeps heat in molten salt, sand or water. Concentrated solar plants with molten ' +
      'salt tanks keep producing power for hours after sunset.',
  },
];
