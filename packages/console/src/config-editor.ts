import { type Api, ApiError } from './api.js';
import { byId, h } from './dom.js';
import type { ConfigEntry, ConfigListing } from './types.js';

const path = (type: string, name: string) =>
  `/v1/config/${encodeURIComponent(type)}/${encodeURIComponent(name)}`;

/**
 * The console's configuration editor: the live items of the key's tenant
 * (or the app's, without keys), a JSON editor that shows the server's
 * validation errors beside the text, and an item's version history with
 * a rollback per version. Hidden when the key may not read the
 * configuration.
 */
export class ConfigEditor {
  readonly #api: Api;
  readonly #section = byId('config-section');
  readonly #items = byId<HTMLUListElement>('config-items');
  readonly #form = byId<HTMLFormElement>('config-form');
  readonly #type = byId<HTMLSelectElement>('config-type');
  readonly #name = byId<HTMLInputElement>('config-name');
  readonly #value = byId<HTMLTextAreaElement>('config-value');
  readonly #comment = byId<HTMLInputElement>('config-comment');
  readonly #errors = byId<HTMLUListElement>('config-errors');
  readonly #history = byId<HTMLOListElement>('config-history');
  /** The version the text in the editor was loaded from (0: a new item), sent as `expectedVersion`. */
  #basedOn = 0;

  constructor(api: Api) {
    this.#api = api;
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#save();
    });
    byId<HTMLButtonElement>('config-new').addEventListener('click', () => this.#edit(undefined));
  }

  /** Lists the items; hides the editor when the key may not read them (403) or the server has no config API. */
  async load(): Promise<void> {
    let listing: ConfigListing;
    try {
      listing = await this.#api.get<ConfigListing>('/v1/config');
    } catch (error) {
      if (error instanceof ApiError && [403, 404].includes(error.status)) {
        this.#section.hidden = true;
        return;
      }
      throw error;
    }
    this.#section.hidden = false;
    if (this.#type.options.length === 0)
      this.#type.replaceChildren(...listing.types.map((type) => h('option', { value: type, text: type })));
    this.#items.replaceChildren(
      ...(listing.items.length === 0
        ? [h('li', { class: 'muted', text: 'No items: the routers use their own options' })]
        : listing.items.map((item) =>
            h(
              'li',
              {},
              h('button', {
                type: 'button',
                class: 'link',
                text: `${item.type}/${item.name} · v${item.version}`,
                onclick: () => void this.#open(item.type, item.name),
              }),
            ),
          )),
    );
  }

  async #open(type: string, name: string): Promise<void> {
    const { versions } = await this.#api.get<{ versions: ConfigEntry[] }>(`${path(type, name)}/versions`);
    this.#edit(versions[0]);
    this.#renderHistory(versions);
  }

  /** Puts an item (or an empty new one) in the editor. */
  #edit(entry: ConfigEntry | undefined): void {
    this.#basedOn = entry?.version ?? 0;
    if (entry) this.#type.value = entry.type;
    this.#name.value = entry?.name ?? '';
    this.#type.disabled = this.#name.readOnly = entry !== undefined;
    this.#value.value = entry && !entry.deleted ? JSON.stringify(entry.value, null, 2) : '{\n}';
    this.#comment.value = '';
    this.#showErrors([]);
    if (!entry) this.#history.replaceChildren();
  }

  #renderHistory(versions: readonly ConfigEntry[]): void {
    this.#history.replaceChildren(
      ...versions.map((entry, index) =>
        h(
          'li',
          {},
          h('strong', { text: `v${entry.version}` }),
          ` ${entry.deleted ? 'deleted' : 'set'} ${new Date(entry.updatedAt).toLocaleString()}`,
          entry.updatedBy ? ` by ${entry.updatedBy}` : '',
          entry.comment ? h('span', { class: 'muted', text: ` · ${entry.comment}` }) : null,
          index === 0
            ? null
            : h('button', {
                type: 'button',
                text: `Roll back to v${entry.version}`,
                onclick: () => void this.#rollback(entry),
              }),
        ),
      ),
    );
  }

  #showErrors(lines: readonly string[]): void {
    this.#errors.replaceChildren(...lines.map((line) => h('li', { text: line })));
    this.#errors.hidden = lines.length === 0;
    this.#value.setAttribute('aria-invalid', String(lines.length > 0));
  }

  async #save(): Promise<void> {
    let value: unknown;
    try {
      value = JSON.parse(this.#value.value);
    } catch (error) {
      this.#showErrors([`Not JSON: ${error instanceof Error ? error.message : String(error)}`]);
      return;
    }
    const body: Record<string, unknown> = { value, expectedVersion: this.#basedOn };
    if (this.#comment.value.trim()) body.comment = this.#comment.value.trim();
    await this.#write(() =>
      this.#api.send<ConfigEntry>('PUT', path(this.#type.value, this.#name.value.trim()), body),
    );
  }

  async #rollback(entry: ConfigEntry): Promise<void> {
    await this.#write(() =>
      this.#api.send<ConfigEntry>('POST', `${path(entry.type, entry.name)}/rollback`, {
        version: entry.version,
        expectedVersion: this.#basedOn,
      }),
    );
  }

  /** Runs a change; the server's refusal (bad item, edited meanwhile) is shown beside the editor. */
  async #write(change: () => Promise<ConfigEntry>): Promise<void> {
    try {
      const saved = await change();
      // Taken: the refusal shown for an earlier try goes at once, not once the list has been read again.
      this.#showErrors([]);
      await this.load();
      await this.#open(saved.type, saved.name);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      const lines = error.status === 409 ? [`${error.message}`] : [error.message, ...error.issues];
      this.#showErrors(lines);
    }
  }
}
