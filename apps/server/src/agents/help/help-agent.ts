import type { AgentMeta } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';

const NAME = 'help';

/** The example phrases an agent lists in `metadata.examples`, if any. */
export function examplesOf(agent: Pick<AgentMeta, 'metadata'>): string[] {
  const examples = agent.metadata?.examples;
  return Array.isArray(examples)
    ? examples.filter((example): example is string => typeof example === 'string')
    : [];
}

/** A message that asks for help itself, rather than one no other agent took. */
const HELP_REQUEST =
  /\b(?:help|what can you do|what do you do|agents?|commands?|capabilit(?:y|ies)|how does this work)\b/;

/** A message that is only a greeting ("hi", "Hello there!", "good morning"): answered in kind. */
const GREETING =
  /^\s*(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening)|yo)(?:\s+(?:there|all|everyone))?\s*[!.,?]*\s*$/i;

const quoted = (phrases: readonly string[]) => phrases.map((phrase) => `"${phrase}"`).join(', ');

function summary(agent: AgentMeta): string {
  const examples = examplesOf(agent);
  return `- ${agent.name}: ${agent.description}${examples.length ? ` Try: ${quoted(examples)}` : ''}`;
}

function details(agent: AgentMeta): string {
  const lines = [`${agent.name}: ${agent.description}`];
  const examples = examplesOf(agent);
  if (examples.length) lines.push(`Examples: ${quoted(examples)}`);
  if (agent.keywords?.length) lines.push(`I send it messages that mention: ${agent.keywords.join(', ')}`);
  return lines.join('\n');
}

/**
 * Creates the help agent, which lists the other agents with their
 * descriptions and example phrases, or describes one agent in detail when
 * the message names it ("help with the calculator"). As the router's
 * fallback it also gets the messages no agent took ("what's the capital of
 * France?"): it says plainly that it cannot answer them, then what the agents
 * can do, rather than letting an agent guess. A greeting ("hi") gets a
 * greeting back, with the same list. `getAgents` is called on every
 * message, so agents added later are listed too.
 *
 * @example
 * ```ts
 * const agents: Agent[] = [calculatorAgent, clockAgent];
 * agents.push(createHelpAgent(() => agents.map(agentMeta)));
 * ```
 */
export function createHelpAgent(getAgents: () => readonly AgentMeta[]): Agent {
  return defineAgent({
    name: NAME,
    description: 'Lists the agents available here, what each one does, and example questions to ask them.',
    keywords: [
      'help',
      'help with',
      'what can you do',
      'agents',
      'commands',
      'capabilities',
      'how does this work',
    ],
    metadata: { examples: ['help', 'what can you do?', 'help with the calculator'] },
    run(message) {
      const others = getAgents().filter((agent) => agent.name !== NAME);
      if (others.length === 0) return 'No other agents are available right now.';
      const text = message.toLowerCase();
      const named = others.filter((agent) => new RegExp(`\\b${agent.name.toLowerCase()}\\b`).test(text));
      if (named.length === 1 && named[0]) return details(named[0]);
      if (GREETING.test(text)) {
        return ['Hello! I can pass your message to one of these agents:', ...others.map(summary)].join('\n');
      }
      if (!HELP_REQUEST.test(text)) {
        return ["I can't answer that: none of the agents here does. They can:", ...others.map(summary)].join(
          '\n',
        );
      }
      return [
        'I can pass your message to one of these agents:',
        ...others.map(summary),
        'Just ask in your own words.',
      ].join('\n');
    },
  });
}
