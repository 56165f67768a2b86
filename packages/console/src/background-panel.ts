import { type Api, UnauthorizedError } from './api.js';
import { byId, h, preview } from './dom.js';
import { ScheduleList } from './schedule-list.js';
import type { BackgroundTurnInfo, QueuedReceipt } from './types.js';

/** How often an open panel reads the background turns again. */
export const POLL_MS = 2_000;
/** Finished turns shown under the active ones (the server keeps up to 200). */
const FINISHED_SHOWN = 10;
/** Statuses of a turn that has not ended yet. */
const ACTIVE = new Set(['queued', 'running', 'awaiting_approval']);
/** Statuses a turn can be cancelled in. */
const CANCELLABLE = new Set(['queued', 'running']);

/** What the panel asks of the rest of the console. */
export interface BackgroundHost {
  /** Opens a session (following its running turn, if it has one). */
  openSession(sessionId: string): void;
  /** A turn this panel listed as queued or running has ended. */
  ended(turn: BackgroundTurnInfo): void;
  say(text: string): void;
  fail(error: unknown): void;
}

/** The elements the panel draws into. */
export interface BackgroundElements {
  /** Open: the panel reads the turns every {@link POLL_MS} while the tab is visible. */
  details: HTMLDetailsElement;
  turns: HTMLElement;
}

/**
 * The "Background" panel: the latest background turns (queued and running
 * first, then the finished ones, marked so), each with its status, when it
 * was queued, its session (a click opens it) and, while it has not ended, a
 * Cancel button. It reads `GET /v1/background-turns` (and the schedules)
 * every {@link POLL_MS} only while it is open and the tab visible.
 */
export class BackgroundPanel {
  readonly #api: Api;
  readonly #elements: BackgroundElements;
  readonly #host: BackgroundHost;
  readonly #schedules: ScheduleList;
  /** Messages of the turns queued from this tab, by turn id (the list does not carry them). */
  readonly #messages = new Map<string, string>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #loading = false;
  /** The list drawn last, to leave the drawing (and the focus) alone when nothing changed. */
  #drawn = '';
  /** The turns whose end is to be told: queued here, or listed unfinished by a read. */
  readonly #watched = new Set<string>();

  constructor(api: Api, elements: BackgroundElements, schedules: ScheduleList, host: BackgroundHost) {
    this.#api = api;
    this.#elements = elements;
    this.#schedules = schedules;
    this.#host = host;
  }

  /** Makes the panel on the console page's elements and starts it (see {@link start}). */
  static mount(api: Api, host: BackgroundHost): BackgroundPanel {
    const schedules = new ScheduleList(
      api,
      {
        list: byId<HTMLUListElement>('schedules'),
        form: byId<HTMLFormElement>('schedule-form'),
        message: byId<HTMLInputElement>('schedule-message'),
        every: byId<HTMLInputElement>('schedule-every'),
      },
      host,
    );
    const elements = {
      details: byId<HTMLDetailsElement>('background-section'),
      turns: byId('background-turns'),
    };
    const panel = new BackgroundPanel(api, elements, schedules, host);
    panel.start();
    return panel;
  }

  /** Starts or stops reading as the panel opens or closes and the tab shows or hides. */
  start(): void {
    this.#elements.details.addEventListener('toggle', () => this.#sync());
    document.addEventListener('visibilitychange', () => this.#sync());
    this.#sync();
  }

  /**
   * Queues a message as a background turn (in `sessionId`, or a new
   * session): says what the 202 receipt says, and the panel opens and
   * lists the turn.
   */
  async queue(message: string, sessionId: string | undefined): Promise<QueuedReceipt> {
    const receipt = await this.#api.queue(sessionId ? { message, sessionId } : { message });
    const { turnId, status } = receipt;
    this.#host.say(`Queued in the background: turn ${turnId} in session ${receipt.sessionId} (${status}).`);
    this.#messages.set(turnId, message);
    // Its end is told even when the first read finds it ended already.
    this.#watched.add(turnId);
    if (this.#elements.details.open) void this.refresh().catch((error: unknown) => this.#host.fail(error));
    else this.#elements.details.open = true;
    return receipt;
  }

  /** Reads the turns and schedules once and draws them. */
  async refresh(): Promise<void> {
    const [turns] = await Promise.all([this.#api.backgroundTurns(), this.#schedules.refresh()]);
    this.#render(turns);
  }

  get #reading(): boolean {
    return this.#elements.details.open && document.visibilityState === 'visible';
  }

  /** Reads now when the panel just became active; stops the timer when it no longer is. */
  #sync(): void {
    if (!this.#reading) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      return;
    }
    if (this.#timer === undefined && !this.#loading) void this.#tick();
  }

  /** One read, then the next one {@link POLL_MS} later while the panel stays active. */
  async #tick(): Promise<void> {
    this.#timer = undefined;
    // Closed or hidden while the timer was set, before its events said so.
    if (!this.#reading) return;
    this.#loading = true;
    try {
      await this.refresh();
    } catch (error) {
      this.#host.fail(error);
      // A key is needed: reading again would only fail again.
      if (error instanceof UnauthorizedError) this.#elements.details.open = false;
    } finally {
      this.#loading = false;
    }
    if (this.#reading && this.#timer === undefined)
      this.#timer = setTimeout(() => void this.#tick(), POLL_MS);
  }

  #render(turns: readonly BackgroundTurnInfo[]): void {
    for (const turn of turns) {
      if (ACTIVE.has(turn.status)) this.#watched.add(turn.turnId);
      else if (this.#watched.delete(turn.turnId)) this.#host.ended(turn);
    }
    const drawn = JSON.stringify(turns);
    if (drawn === this.#drawn) return;
    this.#drawn = drawn;
    const active = turns.filter((turn) => ACTIVE.has(turn.status));
    const finished = turns.filter((turn) => !ACTIVE.has(turn.status)).slice(0, FINISHED_SHOWN);
    const parts: HTMLElement[] = [
      h('h3', { text: 'Queued and running' }),
      active.length === 0
        ? h('p', { class: 'muted', text: 'None' })
        : h('ul', { class: 'bg-turns active' }, ...active.map((turn) => this.#row(turn))),
    ];
    if (finished.length > 0) {
      parts.push(
        h('h3', { text: 'Finished lately' }),
        h('ul', { class: 'bg-turns finished' }, ...finished.map((turn) => this.#row(turn))),
      );
    }
    this.#elements.turns.replaceChildren(...parts);
  }

  #row(turn: BackgroundTurnInfo): HTMLLIElement {
    const message = this.#messages.get(turn.turnId);
    const detail = turn.error?.message ?? (turn.reply ? `→ ${turn.reply}` : undefined);
    return h(
      'li',
      {
        class: `bg-turn ${ACTIVE.has(turn.status) ? 'active' : 'finished'}`,
        'data-turn-id': turn.turnId,
        'data-status': turn.status,
      },
      h(
        'div',
        { class: 'row' },
        h('span', { class: `badge ${turn.status}`, text: turn.status.replace('_', ' ') }),
        turn.queuedAt
          ? h('time', {
              datetime: turn.queuedAt,
              text: `queued ${new Date(turn.queuedAt).toLocaleTimeString()}`,
            })
          : null,
      ),
      message ? h('p', { class: 'bg-message', text: preview(message, 80) }) : null,
      detail ? h('p', { class: 'muted bg-detail', text: preview(detail, 80) }) : null,
      h(
        'div',
        { class: 'row' },
        h('button', {
          type: 'button',
          class: 'link',
          title: turn.status === 'running' ? 'Open the session and follow this turn' : 'Open the session',
          'aria-label': `Open session ${turn.sessionId}`,
          onclick: () => this.#host.openSession(turn.sessionId),
          text: preview(turn.sessionId, 24),
        }),
        CANCELLABLE.has(turn.status)
          ? h('button', {
              type: 'button',
              class: 'danger small',
              'aria-label': `Cancel turn ${turn.turnId}`,
              onclick: (event) => void this.#cancel(turn, event.currentTarget as HTMLButtonElement),
              text: 'Cancel',
            })
          : null,
      ),
    );
  }

  async #cancel(turn: BackgroundTurnInfo, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await this.#api.cancelTurn(turn.sessionId, turn.turnId);
      this.#host.say(`Cancelled turn ${turn.turnId}.`);
    } catch (error) {
      this.#host.fail(error);
    }
    await this.refresh().catch((error: unknown) => this.#host.fail(error));
  }
}
