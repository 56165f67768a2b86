import type { Attributes, Counter, Meter } from '@opentelemetry/api';

/** What happened to a background turn, as `switchboard.background.turns` counts it. */
export type BackgroundEvent = 'queued' | 'started' | 'deferred' | 'cancelled' | 'refused';

/** How a callback ended, as `switchboard.callbacks` counts it. */
export type CallbackOutcome = 'delivered' | 'failed' | 'refused';

/**
 * The metrics of background turns and callbacks, made once per app from its
 * meter (attributes: the app, and an event or outcome; never a turn id).
 * `switchboard_background_turns_total{event}` shows turns queued, taken by a
 * replica, deferred for a busy session, cancelled while queued, and refused
 * before they opened; `switchboard_callbacks_total{outcome}` the callbacks
 * delivered, given up on, or refused at once.
 */
export class BackgroundMetrics {
  readonly #turns: Counter;
  readonly #callbacks: Counter;
  readonly #attributes = new Map<string, Attributes>();
  readonly #app: string;

  constructor(meter: Meter, app: string) {
    this.#app = app;
    this.#turns = meter.createCounter('switchboard.background.turns', {
      description:
        'Background turns queued, started, deferred (busy session), cancelled while queued, refused',
      unit: '{turn}',
    });
    this.#callbacks = meter.createCounter('switchboard.callbacks', {
      description:
        'Callbacks of background turns, by outcome (delivered, failed after its attempts, refused)',
      unit: '{callback}',
    });
  }

  turn(event: BackgroundEvent): void {
    this.#turns.add(1, this.#attributesOf('event', event));
  }

  callback(outcome: CallbackOutcome): void {
    this.#callbacks.add(1, this.#attributesOf('outcome', outcome));
  }

  #attributesOf(name: string, value: string): Attributes {
    const key = `${name}:${value}`;
    let attributes = this.#attributes.get(key);
    if (!attributes) {
      attributes = { app: this.#app, [name]: value };
      this.#attributes.set(key, attributes);
    }
    return attributes;
  }
}
