import {
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskState,
} from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { a2aMessage, dataPart, textOf, textPart } from '../../src/a2a/a2a-parts.js';

/** A client of the official A2A SDK for the agent at `baseUrl`, sending `headers` (the card's request too). */
export async function a2aClient(baseUrl: string, headers: Record<string, string> = {}): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...headers, ...(init?.headers as Record<string, string>) } });
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(baseUrl);
}

let counter = 0;

/** A send request: a user message with text and data parts, optionally on a task and in a context. */
export function userMessage({
  text,
  data = [],
  taskId = '',
  contextId = '',
}: {
  text?: string;
  data?: unknown[];
  taskId?: string;
  contextId?: string;
}): SendMessageRequest {
  const parts = [...(text === undefined ? [] : [textPart(text)]), ...data.map(dataPart)];
  const message: Message = a2aMessage({
    messageId: `m-${++counter}`,
    role: 'user',
    parts,
    taskId,
    contextId,
  });
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

/** The task an answer is, failing when it is a bare message. */
export function asTask(result: Message | Task): Task {
  if ('messageId' in result) throw new Error(`expected a task, got a message: ${textOf(result.parts)}`);
  return result;
}

/** A stream event as a line a test can compare: its kind, the state or text it carries. */
export function describeEvent(event: StreamResponse): string {
  const payload = event.payload;
  if (!payload) return 'empty';
  switch (payload.$case) {
    case 'task':
      return `task ${TaskState[payload.value.status?.state ?? 0]}`;
    case 'message':
      return `message ${textOf(payload.value.parts)}`;
    case 'statusUpdate': {
      const text = textOf(payload.value.status?.message?.parts);
      return `status ${TaskState[payload.value.status?.state ?? 0]}${text ? `: ${text}` : ''}`;
    }
    case 'artifactUpdate':
      return `artifact ${textOf(payload.value.artifact?.parts)}`;
  }
}
