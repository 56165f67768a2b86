/** The least time (ms), over `rounds` runs, that `answer` took over every message: the run least disturbed. */
function leastTime(
  answer: (message: string) => unknown,
  messages: readonly string[],
  rounds: number,
): number {
  let least = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round += 1) {
    const startedAt = performance.now();
    for (const message of messages) {
      try {
        answer(message);
      } catch {
        // Failing is fine; hanging is not.
      }
    }
    least = Math.min(least, performance.now() - startedAt);
  }
  return least;
}

/**
 * How many times longer `answer` takes to answer (or refuse) the `hostile`
 * messages than ordinary ones of the same lengths: `question` after filler
 * words. A ratio of two times measured alike, so a slow machine changes it
 * little, where catastrophic backtracking multiplies it by orders of magnitude.
 *
 * @example
 * ```ts
 * expect(slowdownOnHostileInput(calculate, ['('.repeat(1000)], 'what is 2 + 3?')).toBeLessThan(1_000);
 * ```
 */
export function slowdownOnHostileInput(
  answer: (message: string) => unknown,
  hostile: readonly string[],
  question: string,
  rounds = 7,
): number {
  const ordinary = hostile.map(
    (message) =>
      `${'so '.repeat(message.length).slice(0, Math.max(0, message.length - question.length))}${question}`,
  );
  // Both once first, so that neither is measured while the code is still being compiled.
  leastTime(answer, [...hostile, ...ordinary], 1);
  return leastTime(answer, hostile, rounds) / leastTime(answer, ordinary, rounds);
}
