/**
 * The files `switchboard init` writes: a small project with an
 * orchestrator, two agents, a server, a test and a routing dataset.
 * `{{name}}` and `{{version}}` are filled in.
 */
export const TEMPLATE_FILES: Readonly<Record<string, string>> = {
  'package.json': `{
  "name": "{{name}}",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "engines": { "node": "^20.19.0 || >=22.12.0" },
  "scripts": {
    "start": "tsx src/main.ts",
    "dev": "switchboard dev src/app.ts",
    "test": "vitest run",
    "eval": "switchboard eval src/app.ts evals/routing.jsonl --stub-agents --min-accuracy 0.9"
  },
  "dependencies": {
    "@opentelemetry/api": "1.9.1",
    "@switchboard/core": "^{{version}}",
    "@switchboard/runtime": "^{{version}}",
    "tsx": "4.23.15",
    "zod": "4.6.7"
  },
  "devDependencies": {
    "@switchboard/cli": "^{{version}}",
    "@types/node": "20.19.43",
    "vitest": "4.1.12"
  }
}
`,
  'tsconfig.json': `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true,
    "verbatimModuleSyntax": true,
    "types": ["node"]
  },
  "include": ["src", "test"]
}
`,
  '.gitignore': 'node_modules/\n*.html\nreport.json\n',
  'src/agents.ts': `import { defineAgent } from '@switchboard/runtime';

/** Tells the time (UTC). */
export const clock = defineAgent({
  name: 'clock',
  description: 'Tells the current time or date',
  keywords: ['time', 'date', 'clock', 'today'],
  run: () => \`It is \${new Date().toISOString().slice(11, 16)} UTC on \${new Date().toISOString().slice(0, 10)}.\`,
});

const OPERATIONS: Record<string, (left: number, right: number) => number> = {
  '+': (left, right) => left + right,
  plus: (left, right) => left + right,
  '-': (left, right) => left - right,
  minus: (left, right) => left - right,
  '*': (left, right) => left * right,
  times: (left, right) => left * right,
  '/': (left, right) => left / right,
};

/** Works out "a op b" in a message. */
export const calculator = defineAgent({
  name: 'calculator',
  description: 'Works out simple arithmetic such as 2 + 2 or 6 times 7',
  keywords: ['plus', 'minus', 'times', 'calculate', 'sum', '+', '*'],
  run: (message) => {
    const match = /(-?\\d+(?:\\.\\d+)?)\\s*(\\+|-|\\*|\\/|plus|minus|times)\\s*(-?\\d+(?:\\.\\d+)?)/i.exec(message);
    if (!match) return 'Give me two numbers and an operation, such as 2 + 2.';
    const operation = OPERATIONS[(match[2] as string).toLowerCase()] as (left: number, right: number) => number;
    return \`\${match[1]} \${match[2]} \${match[3]} = \${operation(Number(match[1]), Number(match[3]))}\`;
  },
});

export const agents = [clock, calculator];
`,
  'src/router.ts': `import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]+|[+*\\/-]/g) ?? []);

/**
 * Sends each message to the agent with the most keywords in it, then
 * passes the agent's reply to the user; with no keyword, says what it can do.
 */
export class Router extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation): Decision {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(reply.content);
    const message = currentUserMessage(conversation).content;
    const found = words(message);
    const scored = conversation.agents
      .map((agent) => ({ agent, hits: (agent.keywords ?? []).filter((keyword) => found.has(keyword)) }))
      .filter(({ hits }) => hits.length > 0)
      .sort((left, right) => right.hits.length - left.hits.length);
    const best = scored[0];
    if (!best) {
      const skills = conversation.agents.map((agent) => agent.description.toLowerCase()).join('; ');
      return routeToUser(\`I can help with: \${skills}.\`, { reason: 'no keyword matched' });
    }
    return toolCall(best.agent.name, message, { reason: \`keywords: \${best.hits.join(', ')}\` });
  }
}
`,
  'src/app.ts': `import { agents } from './agents.js';
import { Router } from './router.js';

/** What \`switchboard dev\` serves and \`switchboard eval\` scores. */
export const name = '{{name}}';
export { agents };
export const orchestrator = Router;
`,
  'src/main.ts': `import { App } from '@switchboard/runtime';
import { agents, name, orchestrator } from './app.js';

const app = new App({ name, agents });
const server = await app.start(orchestrator, { port: Number(process.env.PORT ?? 3000) });
console.log(\`\${name} listening on \${server.url}\`);
process.once('SIGINT', () => void server.close());
process.once('SIGTERM', () => void server.close());
`,
  'test/routing.test.ts': `import { fileURLToPath } from 'node:url';
import { App } from '@switchboard/runtime';
import { expectRouting } from '@switchboard/runtime/eval';
import { expect, it } from 'vitest';
import { agents, orchestrator } from '../src/app.js';

const dataset = fileURLToPath(new URL('../evals/routing.jsonl', import.meta.url));

it('routes the labelled cases well', async () => {
  await expectRouting({ orchestrator, agents }, dataset).toScoreAtLeast({ accuracy: 0.9 });
});

it('answers a sum through the calculator', async () => {
  const app = new App({ name: 'test', agents, logLevel: 'silent' }).mount(orchestrator);
  const result = await app.chat({ message: 'what is 6 times 7?' });
  expect(result.reply).toBe('6 times 7 = 42');
  expect(result.steps[0]?.calls[0]?.agent).toBe('calculator');
  await app.close();
});
`,
  'evals/routing.jsonl': `{"id":"time-1","input":"what time is it?","expect":{"agent":"clock"},"tags":["clock"]}
{"id":"time-2","input":"what is the date today","expect":{"agent":"clock"},"tags":["clock"]}
{"id":"time-3","input":"check the clock for me","expect":{"agent":"clock","status":"completed"},"tags":["clock"]}
{"id":"sum-1","input":"what is 2 plus 2","expect":{"agent":"calculator"},"tags":["calculator"]}
{"id":"sum-2","input":"calculate 12 * 3","expect":{"agent":"calculator"},"tags":["calculator"]}
{"id":"sum-3","input":"6 times 7","expect":{"agent":"calculator"},"tags":["calculator"]}
{"id":"sum-4","input":"10 minus 4","expect":{"agent":"calculator","trajectory":["calculator"]},"tags":["calculator"]}
{"id":"oos-1","input":"tell me a joke","expect":{"agent":null},"tags":["out-of-scope"]}
{"id":"oos-2","input":"book a flight to Lisbon","expect":{"agent":null},"tags":["out-of-scope"]}
{"id":"oos-3","input":"hello","expect":{"agent":null,"contains":"I can help with"},"tags":["out-of-scope"]}
`,
  'README.md': `# {{name}}

A [Switchboard](https://www.npmjs.com/package/@switchboard/runtime) project: an orchestrator
(\`src/router.ts\`) that routes each message to one of two agents (\`src/agents.ts\`), a server
(\`src/main.ts\`), a test and a labelled routing dataset (\`evals/routing.jsonl\`).

\`\`\`sh
npm install
npm test                 # the routing test and a chat test
npm run eval             # scores the router on evals/routing.jsonl
npm run dev              # serves the app with the console, restarting on changes
\`\`\`

Add a case to \`evals/routing.jsonl\` for every message your router gets wrong, then change the
router until \`npm run eval\` passes again. \`switchboard eval --html report.html\` draws the
confusion matrix; \`--baseline report.json\` shows which cases a change broke or fixed.
`,
};
