/**
 * The example's MCP server: currency tools with fixed rates, spoken to over
 * stdio. The app starts it as a child process (`mcpTools({ command, args })`);
 * any MCP client can too: `node --import tsx src/currency-mcp-server.ts`.
 *
 * @module
 */
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/** Euros per unit of each currency (fixed, for the example). */
export const EUROS_PER_UNIT: Readonly<Record<string, number>> = { EUR: 1, USD: 0.92, GBP: 1.17, JPY: 0.0061 };

const Currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/)
  .describe('ISO 4217 code, e.g. EUR');

/** The server with its tools: `convert` and `currencies`. */
export function createCurrencyServer(): McpServer {
  const server = new McpServer({ name: 'currency', version: '1.0.0' });
  server.registerTool(
    'convert',
    {
      description: 'Converts an amount from one currency to another at today’s rate',
      inputSchema: { amount: z.number().nonnegative(), from: Currency, to: Currency },
      outputSchema: { amount: z.number(), currency: z.string() },
    },
    ({ amount, from, to }) => {
      const [source, target] = [EUROS_PER_UNIT[from.toUpperCase()], EUROS_PER_UNIT[to.toUpperCase()]];
      if (source === undefined || target === undefined) {
        const known = Object.keys(EUROS_PER_UNIT).join(', ');
        return { isError: true, content: [{ type: 'text', text: `Unknown currency; known: ${known}` }] };
      }
      const converted = Math.round(((amount * source) / target) * 100) / 100;
      return {
        content: [
          { type: 'text', text: `${amount} ${from.toUpperCase()} = ${converted} ${to.toUpperCase()}` },
        ],
        structuredContent: { amount: converted, currency: to.toUpperCase() },
      };
    },
  );
  server.registerTool('currencies', { description: 'The currencies the converter knows' }, () => ({
    content: [{ type: 'text', text: Object.keys(EUROS_PER_UNIT).join(', ') }],
  }));
  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await createCurrencyServer().connect(new StdioServerTransport());
}
