import { App, defineAgent } from '@switchboard/runtime';
import { KeywordOrchestrator } from '@switchboard/orchestrators';
const echo = defineAgent({ name: 'echo', description: 'Repeats', keywords: ['echo'], run: (m) => m });
const other = defineAgent({ name: 'other', description: 'Never', keywords: ['other'], run: () => 'x' });
const app = new App({ name: 'bench', agents: [echo, other] });
app.mount(new KeywordOrchestrator({ name: 'bench', agents: app.agentMetas }));
async function measure(label: string, n: number, fn: (i: number) => Promise<unknown>) {
  const t0 = performance.now(); const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn(i);
  const c = process.cpuUsage(c0);
  console.log(label, 'wall us', ((performance.now() - t0) / n * 1000).toFixed(1), 'cpu us', ((c.user + c.system) / n).toFixed(1));
}
const chat = (i: number) => app.chat({ sessionId: `s${i % 256}`, message: `echo request ${i}` });
await measure('chat warm', 20000, chat);
await measure('chat', 50000, chat);
await measure('chat', 50000, chat);
