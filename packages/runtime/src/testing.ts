export { type ConversationRun, type RunConversationOptions, runConversation } from './testing/conversation-runner.js';
