import type { TaskDefinition } from '@switchboard/orchestrators';

/** How the task router recognises what the demo agents do (ORCHESTRATOR=task). */
export const DEMO_TASKS: Readonly<Record<string, TaskDefinition>> = {
  'tell-time': {
    agent: 'clock',
    description: 'The current time or date, somewhere in the world, or days until a date',
    patterns: ['time', 'date', 'day', 'today', 'clock', 'timezone', 'days until', /\bwhat day\b/i],
  },
  'convert-units': {
    agent: 'converter',
    description: 'Converting a quantity between units',
    patterns: [
      'convert',
      'conversion',
      /\b\d+(\.\d+)?\s*[a-z°]+\s+(to|in|into)\s+[a-z°]+/i,
      'fahrenheit',
      'celsius',
      'miles',
      'km',
      'kg',
      'pounds',
      'ounces',
    ],
  },
  arithmetic: {
    agent: 'calculator',
    description: 'Evaluating arithmetic',
    patterns: [
      'calculate',
      'compute',
      'plus',
      'minus',
      'times',
      'divided by',
      'sum',
      'percent',
      'square root',
      /\d\s*[-+*/^%]\s*\d/,
    ],
  },
  help: {
    agent: 'help',
    description: 'What this assistant can do',
    patterns: ['help', 'what can you do', 'agents', 'capabilities'],
  },
};
