import { setTimeout as sleep } from 'node:timers/promises';
import { type Agent, agentMeta } from '@switchboard/runtime';
import { createCalculatorAgent } from './calculator/calculator-agent.js';
import { type ClockAgentOptions, createClockAgent } from './clock/clock-agent.js';
import { converterAgent } from './converter/converter-agent.js';
import { createHelpAgent } from './help/help-agent.js';

export { calculate } from './calculator/calculate.js';
export { calculatorAgent, createCalculatorAgent } from './calculator/calculator-agent.js';
export { clockAgent, createClockAgent } from './clock/clock-agent.js';
export { convert } from './converter/convert.js';
export { converterAgent } from './converter/converter-agent.js';
export { createHelpAgent } from './help/help-agent.js';

/** Options of {@link createDemoAgents}. */
export interface DemoAgentOptions {
  /** Passed to the clock agent (a fixed `now` in tests, a default time zone). */
  clock?: ClockAgentOptions;
  /**
   * How long every agent waits before it answers (`DEMO_AGENT_DELAY_MS`),
   * to watch a slow turn: streaming, timeouts, a graceful stop. The wait
   * ends early when the call is aborted.
   */
  delayMs?: number;
}

function delayed(agent: Agent, delayMs: number): Agent {
  return {
    ...agent,
    async run(message, context) {
      await sleep(delayMs, undefined, { signal: context.signal });
      return agent.run(message, context);
    },
  };
}

/**
 * The offline demo agents, in routing priority order: clock, converter,
 * calculator, help. With keyword routing a tie goes to the agent declared
 * first, so "what is the time" (clock: "time", calculator: "what is") reaches
 * the clock and "what is 5 km in miles" the converter.
 */
export function createDemoAgents({ clock, delayMs = 0 }: DemoAgentOptions = {}): Agent[] {
  const agents: Agent[] = [createClockAgent(clock), converterAgent, createCalculatorAgent()];
  agents.push(createHelpAgent(() => agents.map(agentMeta)));
  return delayMs > 0 ? agents.map((agent) => delayed(agent, delayMs)) : agents;
}
