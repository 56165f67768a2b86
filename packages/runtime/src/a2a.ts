/**
 * `@switchboard/runtime/a2a`: the Agent2Agent protocol. {@link a2aAgent}
 * makes a remote A2A agent an agent of the app; the App option `a2a`
 * serves the app itself as an A2A agent. Importing it needs `@a2a-js/sdk`
 * installed (an optional peer dependency).
 *
 * @module
 */
// The A2A option types live in `@switchboard/runtime` (the App option `a2a`); these aliases go in the next minor.
import type {
  A2aCardFields as MainA2aCardFields,
  A2aOptions as MainA2aOptions,
  A2aSkillFields as MainA2aSkillFields,
} from './a2a/a2a-options.js';

export { type A2aAgentOptions, a2aAgent } from './a2a/a2a-agent.js';
export { buildAgentCard } from './a2a/a2a-card.js';
export { TASK_STATE_BY_TURN_STATUS, taskIdOf, turnOfTaskId } from './a2a/a2a-task.js';

/** @deprecated Import `A2aCardFields` from `@switchboard/runtime`; `/a2a` stops exporting it in the next minor. */
export type A2aCardFields = MainA2aCardFields;
/** @deprecated Import `A2aOptions` from `@switchboard/runtime`; `/a2a` stops exporting it in the next minor. */
export type A2aOptions = MainA2aOptions;
/** @deprecated Import `A2aSkillFields` from `@switchboard/runtime`; `/a2a` stops exporting it in the next minor. */
export type A2aSkillFields = MainA2aSkillFields;
