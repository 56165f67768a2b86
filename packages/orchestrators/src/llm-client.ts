import { ConfigurationError } from '@switchboard/core';
import type OpenAI from 'openai';

/** The part of an `openai` client Switchboard uses: an `OpenAI` instance, or a wrapper of one. */
export type ChatClient = Pick<OpenAI, 'chat'>;

/**
 * How an LLM component reaches its model: a client you constructed, or the
 * key and base URL of any OpenAI-compatible endpoint (a client is then
 * created on first use, so `openai` stays an optional dependency).
 */
export interface LlmClientOptions {
  /** A client you constructed (retries, timeouts, proxies are then yours to configure). */
  client?: ChatClient;
  /** The API key, e.g. `process.env.OPENAI_API_KEY`. For a keyless local endpoint pass any placeholder. */
  apiKey?: string;
  /** An OpenAI-compatible endpoint, including `/v1`. Default: OpenAI's. */
  baseURL?: string;
}

/**
 * Checks the client options at construction and returns a function that
 * resolves the client, importing `openai` the first time it is needed.
 *
 * @example
 * ```ts
 * const getClient = clientResolver("LLMOrchestrator 'llm'", { apiKey: process.env.OPENAI_API_KEY });
 * const completion = await (await getClient()).chat.completions.create({ model, messages });
 * ```
 */
export function clientResolver(
  owner: string,
  { client, apiKey, baseURL }: LlmClientOptions,
): () => Promise<ChatClient> {
  if (client !== undefined) {
    if (apiKey !== undefined || baseURL !== undefined) {
      throw new ConfigurationError({ message: `${owner}: pass either a client or apiKey/baseURL, not both` });
    }
    if (typeof client?.chat?.completions?.create !== 'function') {
      throw new ConfigurationError({
        message: `${owner}: client must be an OpenAI client (client.chat.completions.create)`,
      });
    }
    const ready = Promise.resolve(client);
    return () => ready;
  }
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new ConfigurationError({
      message: `${owner} needs a client or an apiKey (for example apiKey: process.env.OPENAI_API_KEY)`,
    });
  }
  let created: Promise<ChatClient> | undefined;
  return () => {
    created ??= import('openai').then(
      ({ default: OpenAIClient }) => new OpenAIClient({ apiKey, baseURL }),
      (error: unknown) => {
        created = undefined;
        throw new ConfigurationError({
          message: `${owner} needs the 'openai' package: install it, or pass a client`,
          cause: error,
        });
      },
    );
    return created;
  };
}
