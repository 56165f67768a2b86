import { type Agent, defineAgent } from '@switchboard/runtime';
import { findTopic, type SimulatedDesk, TOPICS, type Topic } from './desk.js';

const NO_TOPIC = `Which topic? I know ${TOPICS.map((topic) => topic.name).join(' and ')}.`;

/** The lines of `text` that match `pattern`, by their first group. */
function linesMatching(text: string, pattern: RegExp): string[] {
  return text.split('\n').flatMap((line) => {
    const match = pattern.exec(line.trim());
    return match?.[1] ? [match[1]] : [];
  });
}

/**
 * The briefing desk's four agents. `researcher` and `factbook` look a topic
 * up; `outliner` and `writer` work only from the results of the steps their
 * task depends on, which the planner passes them with the task.
 */
export function briefingAgents(desk: SimulatedDesk): Agent[] {
  /** An agent that works on the desk: `answer` gets the task and its topic. */
  const deskAgent = (name: string, description: string, answer: (task: string, topic: Topic) => string) =>
    defineAgent({
      name,
      description,
      run(task, { signal }) {
        const topic = findTopic(task);
        return topic ? desk.work(name, task, signal, () => answer(task, topic)) : NO_TOPIC;
      },
    });

  return [
    deskAgent('researcher', 'Gathers background notes on a topic', (_task, topic) =>
      [`Notes on ${topic.name}:`, ...topic.notes.map((note) => `- ${note.heading}: ${note.text}`)].join('\n'),
    ),
    deskAgent('factbook', 'Looks up key figures about a topic', (_task, topic) =>
      [`Key figures on ${topic.name}:`, ...topic.figures.map((figure) => `* ${figure}`)].join('\n'),
    ),
    deskAgent('outliner', 'Turns research notes into the outline of a briefing', (task) => {
      const headings = linesMatching(task, /^- ([^:]+):/);
      if (headings.length === 0) return 'There are no notes to outline.';
      return ['Outline:', ...headings.map((heading, index) => `${index + 1}. ${heading}`)].join('\n');
    }),
    deskAgent('writer', 'Writes a short briefing from an outline and key figures', (task, topic) => {
      const sections = linesMatching(task, /^\d+\. (.+)$/);
      const figures = linesMatching(task, /^\* (.+)$/);
      const title = topic.name[0]!.toUpperCase() + topic.name.slice(1);
      return [
        `${title}, a briefing. It covers: ${sections.join(', ') || 'no outline was given'}.`,
        `Key figures: ${figures.join('; ') || 'not available'}.`,
      ].join(' ');
    }),
  ];
}
