import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptEntry,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import { CLASSIFIER_INSTRUCTIONS } from './app.js';

function textOf(message: RecordedRequest['body']['messages'][number] | undefined): string {
  return typeof message?.content === 'string' ? message.content : '';
}

/** The writer's reply, made from the facts in its task. */
function write(task: string): string {
  const fact = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(task)?.[1] ?? '';
  const articles = fact('Articles');
  return [
    `Thanks for reaching out about "${fact('Request')}".`,
    `Outcome: ${fact('Outcome')}.`,
    articles === 'none' ? '' : `See ${articles}.`,
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * A stand-in for the model, so that the example runs without an API key:
 * the classifier says `billing` for money words and `technical` otherwise;
 * the writer puts the facts it is given into three sentences.
 */
export function supportDeskModel(request: RecordedRequest): ScriptedReply {
  const system = textOf(request.body.messages[0]);
  const task = textOf(request.body.messages.findLast((message) => message.role === 'user'));
  if (system === CLASSIFIER_INSTRUCTIONS)
    return { content: /refund|charge|invoice|money|€|eur\b/i.test(task) ? 'billing' : 'technical' };
  return { content: write(task) };
}

/** Starts an OpenAI-compatible server on loopback that answers every request with {@link supportDeskModel}. */
export async function startOfflineModel(): Promise<ScriptedModelServer> {
  const server = await createScriptedModelServer();
  const endless: ScriptEntry = (request) => {
    server.push(endless);
    return supportDeskModel(request);
  };
  server.push(endless);
  return server;
}
