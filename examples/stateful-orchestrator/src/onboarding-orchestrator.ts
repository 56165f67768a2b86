import {
  AbstractOrchestrator,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  type OrchestratorOptions,
  routeToUser,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { parseIntent } from './intents.js';
import { countMessage, type Profile, readProfile, rememberName, rememberUnits } from './profile.js';

const REQUIRED_AGENTS = ['greeter', 'weather'] as const;
const UNITS_QUESTION = 'Do you prefer metric or imperial units?';

function describeProfile({ name, units, turns, conversations }: Profile): string {
  const who = name ? `You're ${name}` : `I don't know your name yet (say "my name is …")`;
  const preference = units
    ? `you prefer ${units} units`
    : 'you have not chosen units yet (metric until you do)';
  return `${who}; ${preference}; this is message ${turns} of our conversation number ${conversations}.`;
}

/**
 * A guided onboarding flow whose state lives in `RequestContext` memory, so it
 * survives between turns and across server replicas sharing a store:
 *
 * - session memory: the user's name and a message counter (`updateContent`);
 * - user memory: the preferred units and a conversation counter, shared by
 *   every session of the same `userId`.
 *
 * It asks for a name, then for units, then routes weather questions to the
 * `weather` agent in the preferred units; "what do you know about me?" is
 * answered straight from memory.
 */
export class OnboardingOrchestrator extends AbstractOrchestrator {
  constructor(options: OrchestratorOptions) {
    super(options);
    const missing = REQUIRED_AGENTS.filter((name) => !this.agents.some((agent) => agent.name === name));
    if (missing.length > 0) {
      throw new ConfigurationError({
        message: `OnboardingOrchestrator needs the agents: ${missing.join(', ')}`,
      });
    }
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const [reply] = latestToolResults(conversation);
    if (reply) return this.answerWith(reply);

    await countMessage();
    const text = currentUserMessage(conversation).content;
    const intent = parseIntent(text);
    const profile = await readProfile();
    switch (intent.kind) {
      case 'introduce':
        await rememberName(intent.name);
        return toolCall('greeter', text, {
          input: { name: intent.name },
          reason: 'the user introduced themselves',
        });
      case 'set-units':
        await rememberUnits(intent.units);
        return routeToUser(
          `Got it${profile.name ? `, ${profile.name}` : ''}: I'll use ${intent.units} units from now on.`,
          {
            reason: 'saved the preferred units in user memory',
          },
        );
      case 'weather': {
        const units = intent.units ?? profile.units ?? 'metric';
        return toolCall('weather', text, {
          input: { units },
          reason: `weather question, answered in ${units} units`,
        });
      }
      case 'profile':
        return routeToUser(describeProfile(profile), { reason: 'answered from memory' });
      default:
        return routeToUser(this.nextStep(profile), { reason: 'guiding the onboarding' });
    }
  }

  /** What to ask next when the message was not understood: the first missing piece of the profile. */
  protected nextStep({ name, units }: Profile): string {
    if (!name) return `Welcome! What's your name? (Say "my name is …")`;
    if (!units) return `Hi ${name}! ${UNITS_QUESTION}`;
    return `Hi ${name}! Ask me about the weather in Paris, Oslo, Cairo or Tokyo, or "what do you know about me?".`;
  }

  /** After an agent replied: pass its answer on, continuing the onboarding after a greeting. */
  protected async answerWith(reply: ToolMessage): Promise<Decision> {
    if (reply.status === 'error') {
      return routeToUser(`Sorry, the ${reply.name} agent could not answer right now.`, {
        reason: `${reply.name} failed`,
      });
    }
    if (reply.name === 'greeter') {
      const { units } = await readProfile();
      if (!units)
        return routeToUser(`${reply.content} ${UNITS_QUESTION}`, { reason: 'greeted; units still unknown' });
    }
    return routeToUser(reply.content, { reason: `${reply.name} answered` });
  }
}
