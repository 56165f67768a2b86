import { type Api, ApiError } from './api.js';
import { formatDuration, h, preview } from './dom.js';
import type { ScheduleInfo } from './types.js';

/** The elements the schedule list draws into and reads. */
export interface ScheduleElements {
  list: HTMLUListElement;
  form: HTMLFormElement;
  message: HTMLInputElement;
  /** Seconds between runs. */
  every: HTMLInputElement;
}

/** What the list asks of the rest of the console. */
export interface ScheduleHost {
  say(text: string): void;
  fail(error: unknown): void;
}

/**
 * The schedules of the Background panel (`GET /v1/schedules`): each with
 * its message and timing, and a Delete button; a small form adds one that
 * runs every so many seconds in a new session each time.
 */
export class ScheduleList {
  readonly #api: Api;
  readonly #elements: ScheduleElements;
  readonly #host: ScheduleHost;
  /** The server has no schedules (its app turned background turns off): asked no more. */
  #off = false;
  #drawn = '';

  constructor(api: Api, elements: ScheduleElements, host: ScheduleHost) {
    this.#api = api;
    this.#elements = elements;
    this.#host = host;
    elements.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#create();
    });
  }

  /** Reads the schedules and draws them. */
  async refresh(): Promise<void> {
    if (this.#off) return;
    try {
      this.#render(await this.#api.schedules());
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 400)) throw error;
      // 400 background_unavailable: the server runs no background turns.
      this.#off = true;
      this.#elements.form.hidden = true;
      this.#elements.list.replaceChildren(h('li', { class: 'muted', text: 'This server runs no schedules' }));
    }
  }

  #render(schedules: readonly ScheduleInfo[]): void {
    const drawn = JSON.stringify(schedules);
    if (drawn === this.#drawn) return;
    this.#drawn = drawn;
    this.#elements.list.replaceChildren(
      ...(schedules.length === 0
        ? [h('li', { class: 'muted', text: 'No schedules' })]
        : schedules.map((schedule) =>
            h(
              'li',
              { class: 'schedule', 'data-schedule-id': schedule.id },
              h('p', { class: 'bg-message', text: preview(schedule.message, 80) }),
              h(
                'div',
                { class: 'row' },
                h('span', { class: 'muted', text: timingOf(schedule) }),
                h('button', {
                  type: 'button',
                  class: 'danger small',
                  'aria-label': `Delete schedule ${schedule.id}`,
                  onclick: (event) => void this.#delete(schedule, event.currentTarget as HTMLButtonElement),
                  text: 'Delete',
                }),
              ),
            ),
          )),
    );
  }

  async #delete(schedule: ScheduleInfo, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await this.#api.deleteSchedule(schedule.id);
      this.#host.say(`Deleted schedule ${schedule.id}.`);
      await this.refresh();
    } catch (error) {
      button.disabled = false;
      this.#host.fail(error);
    }
  }

  async #create(): Promise<void> {
    const { message, every } = this.#elements;
    const text = message.value.trim();
    const seconds = Number(every.value);
    if (!text || !Number.isFinite(seconds)) return;
    try {
      await this.#api.createSchedule({ message: text, every: Math.round(seconds * 1000) });
      message.value = '';
      this.#host.say('Schedule added.');
      await this.refresh();
    } catch (error) {
      this.#host.fail(error);
    }
  }
}

/** `every 5.0 s`, `every 2 min`, or `cron 0 9 * * * (Europe/Paris)`, and where the runs go. */
function timingOf(schedule: ScheduleInfo): string {
  const when =
    schedule.every !== undefined
      ? `every ${schedule.every % 60_000 === 0 ? `${schedule.every / 60_000} min` : formatDuration(schedule.every)}`
      : `cron ${schedule.cron ?? '?'}${schedule.timezone ? ` (${schedule.timezone})` : ''}`;
  return schedule.sessionId
    ? `${when} · ${preview(schedule.sessionId, 20)}`
    : `${when} · new session each run`;
}
