/**
 * `@switchboard/runtime/a2a`: the Agent2Agent protocol. {@link a2aAgent}
 * makes a remote A2A agent an agent of the app; the App option `a2a`
 * serves the app itself as an A2A agent. Importing it needs `@a2a-js/sdk`
 * installed (an optional peer dependency).
 *
 * @module
 */
export { type A2aAgentOptions, a2aAgent } from './a2a/a2a-agent.js';
export { buildAgentCard } from './a2a/a2a-card.js';
export type { A2aCardFields, A2aOptions, A2aSkillFields } from './a2a/a2a-options.js';
export { TASK_STATE_BY_TURN_STATUS, taskIdOf, turnOfTaskId } from './a2a/a2a-task.js';
