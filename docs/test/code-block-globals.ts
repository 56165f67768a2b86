// The names a docs block that shows part of a program may use without declaring them (see code-blocks.test.ts).
// Each is one the pages' prose introduces; keep this short, and typed from the packages themselves.
import type { Agent, App, ChatClient } from '@switchboard/runtime';

declare global {
  /** The app the page is building (`new App(...)`). */
  const app: App;
  /** The agents the app hosts (an orchestrator is given them as `app.agentMetas`). */
  const agents: readonly Agent[];
  /** An OpenAI-compatible client (`new OpenAI()`), for what calls a model. */
  const client: ChatClient;
}
