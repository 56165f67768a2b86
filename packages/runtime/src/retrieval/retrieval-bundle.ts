import { z } from 'zod';
import type { RetrievalMatch } from './vector-store.js';

const MetadataSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** Schema of one retrieved item, as kept on the agent's reply. */
export const RetrievalItemSchema = z.object({
  id: z.string(),
  documentId: z.string(),
  /** The chunk's text, cut to the agent's `snippetChars`. */
  text: z.string(),
  score: z.number().min(0).max(1),
  source: z.string(),
  metadata: MetadataSchema.optional(),
});

/**
 * Schema of what a retrieval agent found: its reply's `metadata.data`. At
 * most `topK` items, best first, each with a score in 0–1 and its source; the
 * distinct sources in order of first appearance; a summary written by a
 * model (`summarizedBy: 'model'`) or made of the top snippets.
 */
export const RetrievalBundleSchema = z.object({
  kind: z.literal('retrieval'),
  query: z.string(),
  items: z.array(RetrievalItemSchema),
  sources: z.array(z.string()),
  summary: z.string(),
  summarizedBy: z.enum(['model', 'snippets']),
  ranking: z.enum(['cosine', 'full-text']),
});

/** One retrieved item of a {@link RetrievalBundle}. */
export type RetrievalItem = z.infer<typeof RetrievalItemSchema>;
/** What a retrieval agent found, as an orchestrator reads it from the reply's `metadata.data`. */
export type RetrievalBundle = z.infer<typeof RetrievalBundleSchema>;

/**
 * The retrieval bundle an agent reply carries, if it carries one (checked
 * against {@link RetrievalBundleSchema}, never trusted).
 *
 * @example
 * ```ts
 * const bundle = retrievalBundleOf(conversation.lastResults?.[0]);
 * if (bundle && bundle.items.length === 0) return routeToUser('I found nothing on that.');
 * ```
 */
export function retrievalBundleOf(
  message: { metadata?: Record<string, unknown> } | undefined,
): RetrievalBundle | undefined {
  const parsed = RetrievalBundleSchema.safeParse(message?.metadata?.data);
  return parsed.success ? parsed.data : undefined;
}

/** A chunk's text cut to `limit` characters at a word break, marked with an ellipsis when cut. */
export function snippetOf(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit);
  const space = cut.lastIndexOf(' ');
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Matches as bundle items: snippets cut to `snippetChars`, scores rounded to 4 places. */
export function itemsOf(matches: readonly RetrievalMatch[], snippetChars: number): RetrievalItem[] {
  return matches.map(({ id, documentId, text, score, source, metadata }) => {
    const item: RetrievalItem = {
      id,
      documentId,
      text: snippetOf(text, snippetChars),
      score: Math.round(score * 10_000) / 10_000,
      source,
    };
    if (Object.keys(metadata).length > 0) item.metadata = metadata;
    return item;
  });
}

/** The distinct sources of `items`, in order of first appearance. */
export function sourcesOf(items: readonly RetrievalItem[]): string[] {
  return [...new Set(items.map((item) => item.source))];
}

/** The summary made without a model: the top three snippets with their sources. */
export function snippetSummary(items: readonly RetrievalItem[]): string {
  if (items.length === 0) return 'Nothing relevant was found.';
  return items
    .slice(0, 3)
    .map((item) => `${item.text} (${item.source})`)
    .join('\n');
}

/** The reply text: the summary, then each item with its score and source. */
export function bundleText(bundle: RetrievalBundle): string {
  if (bundle.items.length === 0) return bundle.summary;
  const list = bundle.items.map(
    (item, index) => `[${index + 1}] ${item.source} (score ${item.score.toFixed(2)}): ${item.text}`,
  );
  return `${bundle.summary}\n\nSources:\n${list.join('\n')}`;
}
