import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  InvalidDecisionError,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { defineAgent } from '../../src/agents/agent.js';
import type { Agent } from '../../src/agents/agent-contract.js';

/** The agents of the eval tests: each answers a fixed sentence, `slow` never answers. */
export const AGENTS: Agent[] = [
  defineAgent({ name: 'clock', description: 'Tells the time', run: () => 'the clock says noon' }),
  defineAgent({ name: 'calculator', description: 'Does sums', run: () => 'the sum is 4' }),
  defineAgent({ name: 'weather', description: 'Tells the weather', run: () => 'sunny' }),
  defineAgent({
    name: 'slow',
    description: 'Never answers until aborted',
    run: (_message, { signal }) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
  }),
];

/**
 * A router with known mistakes: `time` → clock (checked first), `sum` →
 * calculator, `weather` → calculator (wrong), `both` → clock and calculator
 * at once, `chain` → clock then calculator, `slow` → slow, `explode` → an
 * error, `again` → what the previous user message would get; anything else
 * is answered without an agent. Each decision reports 3 input and 1 output tokens.
 */
export class KnownRouter extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation): Decision {
    conversation.recorder?.usage({ inputTokens: 3, outputTokens: 1 });
    const results = latestToolResults(conversation);
    let text = currentUserMessage(conversation).content.toLowerCase();
    if (text === 'again') {
      const earlier = conversation.messages
        .slice(0, conversation.turnStart)
        .findLast((message) => message.role === 'user');
      text = earlier?.content.toLowerCase() ?? '';
    }
    if (text.startsWith('chain') && results.length === 1 && results[0]?.name === 'clock')
      return toolCall('calculator', text, { reason: 'second link of the chain' });
    if (results.length > 0) return routeToUser(results.map((result) => result.content).join('; '));
    if (text.includes('explode')) return { error: new InvalidDecisionError({ message: 'boom' }) };
    if (text.startsWith('both')) return [toolCall('clock', text), toolCall('calculator', text)];
    if (text.startsWith('chain')) return toolCall('clock', text, { reason: 'first link of the chain' });
    if (text.includes('slow')) return toolCall('slow', text);
    if (text.includes('time'))
      return toolCall('clock', text, { reason: 'matched time', thought: 'time wins over sum' });
    if (text.includes('sum')) return toolCall('calculator', text, { reason: 'matched sum' });
    if (text.includes('weather'))
      return toolCall('calculator', text, { reason: 'weather looks like numbers' });
    return routeToUser('I can tell the time and do sums.', { reason: 'no keyword' });
  }
}

/** The orchestrator and agents as `runEval` takes them. */
export const target = () => ({ orchestrator: KnownRouter, agents: AGENTS, name: 'known' });
