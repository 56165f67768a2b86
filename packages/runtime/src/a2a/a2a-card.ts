import { A2A_PROTOCOL_VERSION, AgentCard } from '@a2a-js/sdk';
import type { ServerBackend } from '../backend/server-backend.js';
import type { A2aCardFields } from './a2a-options.js';

/** The agent card of the app: who it is, where its endpoint is, what its agents do, how to authenticate. */
export function buildAgentCard(
  backend: Pick<ServerBackend, 'name' | 'agents' | 'auth'>,
  { url, card = {} }: { url: string; card?: A2aCardFields },
): AgentCard {
  const names = backend.agents.map((agent) => agent.name);
  const json: Record<string, unknown> = {
    name: card.name ?? backend.name,
    description:
      card.description ??
      `${backend.name}: a Switchboard orchestrator that routes each message to one of its agents (${names.join(', ')}).`,
    version: card.version ?? '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills:
      card.skills ??
      backend.agents.map((agent) => ({
        id: agent.name,
        name: agent.name,
        description: agent.description,
        tags: agent.keywords ?? agent.capabilities ?? [],
      })),
  };
  if (card.provider) json.provider = card.provider;
  if (card.documentationUrl) json.documentationUrl = card.documentationUrl;
  if (card.iconUrl) json.iconUrl = card.iconUrl;
  if (backend.auth) {
    json.securitySchemes = {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'An API key of the app' } },
    };
    json.securityRequirements = [{ schemes: { bearer: { list: [] } } }];
  }
  return AgentCard.fromJSON(json);
}

/**
 * The card with its interfaces' URLs resolved against the URL it was read
 * from: a Switchboard server that cannot tell its own public URL names the
 * bare path (`/a2a`), and its card's URL says where that is.
 */
export function withAbsoluteUrls(card: AgentCard, cardUrl: string): AgentCard {
  return {
    ...card,
    supportedInterfaces: card.supportedInterfaces.map((entry) => ({
      ...entry,
      url: new URL(entry.url, cardUrl).toString(),
    })),
  };
}
