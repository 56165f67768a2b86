/** One thing a router can do, as named in a clarifying question: an agent or a task. */
export interface Capability {
  name: string;
  description?: string;
}

/** Options of {@link clarifyingQuestion}. */
export interface ClarifyingQuestionOptions {
  /** The opening sentence (default: "I'm not sure what you need."). */
  intro?: string;
  /** The closing question (default: "Which of these would you like?"). */
  question?: string;
}

/**
 * The question a router asks when it cannot tell where a message belongs:
 * it names what it can do, one capability per line.
 *
 * @example
 * ```ts
 * clarifyingQuestion([{ name: 'clock', description: 'Tells the time' }]);
 * // "I'm not sure what you need. I can help with:\n- clock: Tells the time\nWhich of these would you like?"
 * ```
 */
export function clarifyingQuestion(
  capabilities: readonly Capability[],
  {
    intro = "I'm not sure what you need.",
    question = 'Which of these would you like?',
  }: ClarifyingQuestionOptions = {},
): string {
  if (capabilities.length === 0) return `${intro} I have no agent available to help with that right now.`;
  const lines = capabilities.map(({ name, description }) =>
    description ? `- ${name}: ${description}` : `- ${name}`,
  );
  return [`${intro} I can help with:`, ...lines, question].join('\n');
}
