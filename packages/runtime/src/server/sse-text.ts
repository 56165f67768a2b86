/**
 * One Server-Sent Event as text: `event:` when named, one `data:` line, `id:`
 * when numbered. `data` is one line, as JSON text always is (`JSON.stringify`
 * escapes line breaks), and `event` and `id` are the runtime's own names and
 * event ids: the events of a batch are joined as text and written at once,
 * without Hono's `writeSSE` checking and splitting each (a cost per delta).
 *
 * @example
 * ```ts
 * sseText(JSON.stringify(event), event.type, event.eventId); // 'event: agent-delta\ndata: {…}\nid: 1-7\n\n'
 * ```
 */
export function sseText(data: string, event?: string, id?: string): string {
  const head = event === undefined ? '' : `event: ${event}\n`;
  return id === undefined ? `${head}data: ${data}\n\n` : `${head}data: ${data}\nid: ${id}\n\n`;
}
