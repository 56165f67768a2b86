import { ConfigurationError } from '@switchboard/core';
import { z } from 'zod';

const EnvSchema = z.object({
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z
    .url({ error: 'OPENAI_BASE_URL must be a URL, e.g. http://localhost:11434/v1' })
    .optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-4o-mini'),
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
});

/** The example's configuration, from environment variables. */
export interface LlmRoutedConfig {
  apiKey: string;
  /** Any OpenAI-compatible endpoint including `/v1`; OpenAI's when absent. */
  baseURL?: string;
  /** Used by both the router and the weather agent (default `gpt-4o-mini`). */
  model: string;
  port: number;
  host: string;
}

/**
 * Reads `OPENAI_API_KEY` (required), `OPENAI_BASE_URL`, `OPENAI_MODEL`, `PORT`
 * and `HOST`. Throws a `ConfigurationError` that says what to set; empty
 * variables count as unset.
 *
 * @example
 * ```ts
 * const config = readConfig(process.env);
 * ```
 */
export function readConfig(env: Record<string, string | undefined> = process.env): LlmRoutedConfig {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `${issue.path.join('.')}: ${issue.message}`)
      .join('; ');
    throw new ConfigurationError({ message: `Invalid configuration: ${problems}` });
  }
  const {
    OPENAI_API_KEY: apiKey,
    OPENAI_BASE_URL: baseURL,
    OPENAI_MODEL: model,
    PORT: port,
    HOST: host,
  } = parsed.data;
  if (!apiKey) {
    throw new ConfigurationError({
      message:
        'OPENAI_API_KEY is not set: the llm-routed example routes with a language model. Set OPENAI_API_KEY ' +
        '(for another OpenAI-compatible endpoint also OPENAI_BASE_URL, and OPENAI_MODEL for its model name).',
    });
  }
  const config: LlmRoutedConfig = { apiKey, model, port, host };
  if (baseURL) config.baseURL = baseURL;
  return config;
}
