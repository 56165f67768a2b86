import { h } from './dom.js';
import { applyEvent, type TurnView } from './timeline.js';
import type { StreamEvent } from './types.js';

/** A message of the conversation: its role (and state, e.g. `agent streaming`), its text and who wrote it. */
export function messageItem(role: string, text: string, author?: string): HTMLLIElement {
  return h(
    'li',
    { class: `message ${role}` },
    h('span', { class: 'author', text: author ?? role }),
    h('p', { class: 'content', text }),
  );
}

/** What {@link followEvents} draws into. */
export interface LivePage {
  messages: HTMLElement;
  /** The turns the timeline shows (a turn already shown is drawn again from its events). */
  turns(): TurnView[];
  /** The turn started in session `sessionId`. */
  started(sessionId: string): void;
  renderTimeline(): void;
  say(text: string): void;
}

/**
 * Shows a turn's events as they come: its timeline, its agents' bubbles and
 * the answer. `where` is where the stream is (its turn, its last event id),
 * to rejoin it after a dropped connection.
 */
export function followEvents(text: string, page: LivePage) {
  const bubbles = new Bubbles(page);
  let live: TurnView | undefined;
  const where: { turnId?: string; lastEventId?: string } = {};
  const onEvent = (event: StreamEvent) => {
    where.turnId = event.turnId;
    if (event.eventId) where.lastEventId = event.eventId;
    if (event.type === 'turn-start') {
      page.started(event.sessionId);
      const turns = page.turns();
      // A turn shown from the store (a rejoin from its start) is drawn again from its events.
      live = turns.find((turn) => turn.turnId === event.turnId);
      if (!live) {
        live = { turnId: event.turnId, status: 'running', message: text, steps: [] };
        turns.push(live);
      } else if (!event.resumed) live.steps = [];
      page.say('Streaming the reply…');
    }
    if (live) {
      applyEvent(live, event);
      page.renderTimeline();
    }
    bubbles.show(event);
  };
  return { onEvent, where };
}

/** The agents' bubbles and the answer of one turn, as their events come. */
class Bubbles {
  readonly #page: LivePage;
  readonly #agents = new Map<string, HTMLElement>();
  #answer: HTMLElement | undefined;

  constructor(page: LivePage) {
    this.#page = page;
  }

  show(event: StreamEvent): void {
    const { messages } = this.#page;
    if (event.type === 'agent-start' && event.toolCallId) {
      const item = messageItem('agent streaming', '', event.agent);
      this.#agents.set(event.toolCallId, item);
      messages.append(item);
    } else if (event.type === 'agent-delta' || event.type === 'agent-end') {
      const item = event.toolCallId ? this.#agents.get(event.toolCallId) : undefined;
      const content = item?.querySelector('.content');
      if (!item || !content) return;
      if (event.type === 'agent-delta') content.textContent += event.delta ?? '';
      else {
        content.textContent = event.content ?? content.textContent;
        item.classList.remove('streaming');
        if (event.status === 'error') item.classList.add('failed');
      }
    } else if (event.type === 'answer-delta') {
      this.#answer ??= messages.appendChild(messageItem('assistant streaming', '', 'assistant'));
      const content = this.#answer.querySelector('.content');
      if (content)
        content.textContent = event.reset ? (event.delta ?? '') : content.textContent + (event.delta ?? '');
    } else if (event.type === 'message') {
      this.#answer ??= messages.appendChild(messageItem('assistant', '', 'assistant'));
      this.#answer.classList.remove('streaming');
      const content = this.#answer.querySelector('.content');
      if (content) content.textContent = event.content ?? '';
      this.#answer = undefined;
    } else if (event.type === 'error') {
      messages.append(messageItem('error', event.message ?? 'The turn failed', 'error'));
    } else if (event.type === 'approval-request') {
      this.#page.say(`The call to ${event.agent} waits for approval.`);
    }
  }
}
