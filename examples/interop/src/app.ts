import { fileURLToPath } from 'node:url';
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { type Agent, App, type AppOptions, defineAgent, llmAgent } from '@switchboard/runtime';
import { mcpTools } from '@switchboard/runtime/mcp';

/** What {@link buildApp} needs. */
export interface InteropOptions extends Partial<Pick<AppOptions, 'logLevel' | 'tracing'>> {
  model: string;
  apiKey: string;
  baseURL?: string;
  /** Agents served elsewhere (an `a2aAgent`, say), routed by the same keyword router. */
  remoteAgents?: readonly Agent[];
}

/** How the app starts the example's MCP server: this Node, with tsx, over stdio. */
export const CURRENCY_SERVER = {
  name: 'currency',
  command: process.execPath,
  args: ['--import', 'tsx', fileURLToPath(new URL('./currency-mcp-server.ts', import.meta.url))],
};

/**
 * The interop app: a `money` agent (a model using the currency MCP server's
 * tools), a `help` agent, and whatever `remoteAgents` are given, all routed
 * by keywords. Served over MCP too (`mcp: true`).
 */
export function buildApp({ model, apiKey, baseURL, remoteAgents = [], ...options }: InteropOptions) {
  const money = llmAgent({
    name: 'money',
    description: 'Converts amounts between currencies with the currency tools',
    keywords: ['convert', 'currency', 'currencies', 'exchange', 'eur', 'usd', 'gbp', 'jpy'],
    model,
    apiKey,
    baseURL,
    instructions: 'Convert amounts with the fx_ tools; answer in one sentence.',
    tools: [mcpTools({ ...CURRENCY_SERVER, prefix: 'fx_', timeoutMs: 10_000 })],
  });
  const help = defineAgent({
    name: 'help',
    description: 'Says what this desk can do',
    run: () => 'I convert currencies, e.g. "convert 100 EUR to USD".',
  });
  const agents = [money, ...remoteAgents, help];
  const app = new App({ name: 'interop', agents, mcp: true, ...options });
  const orchestrator = new KeywordOrchestrator({
    name: 'keyword',
    agents,
    fallbackAgent: 'help',
  });
  return { app, orchestrator };
}
