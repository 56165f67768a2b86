import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';

/**
 * A stand-in model for running offline: asked to convert "<amount> <from>
 * to <to>", it calls `fx_convert`; given the tool's result, it answers with it.
 */
export function currencyModel(request: RecordedRequest): ScriptedReply {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return { content: `${String(last.content).split('\n')[0]}.` };
  const text = typeof last?.content === 'string' ? last.content : '';
  const match = /(\d+(?:\.\d+)?)\s*([A-Za-z]{3})\s+(?:to|in)\s+([A-Za-z]{3})/.exec(text);
  if (!match) return { content: 'Tell me an amount and two currencies, e.g. "convert 100 EUR to USD".' };
  const [, amount, from, to] = match;
  return { toolCalls: [{ name: 'fx_convert', arguments: { amount: Number(amount), from, to } }] };
}

/** Serves {@link currencyModel} for as many requests as come. */
export async function startOfflineModel(): Promise<ScriptedModelServer> {
  const server = await createScriptedModelServer();
  const endless = (request: RecordedRequest) => {
    server.push(endless);
    return currencyModel(request);
  };
  server.push(endless);
  return server;
}
