import type {
  AgentInfo,
  AgentStatsInfo,
  BackgroundTurnInfo,
  GraphInfo,
  QueuedReceipt,
  ScheduleInfo,
  SessionBody,
  SessionSummary,
  StreamEvent,
} from './types.js';

const KEY_STORAGE = 'switchboard.console.apiKey';

/** The server answered 401: the console asks for a key. */
export class UnauthorizedError extends Error {
  override name = 'UnauthorizedError';
}

/** An API error with the server's `{ error: { code, message, issues? } }`, when it sent one. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    /** What was wrong with the request, one line each (a bad config item's schema issues). */
    readonly issues: readonly string[] = [],
  ) {
    super(message);
  }
}

/** Talks to the Switchboard HTTP API of the server that served the console. */
export class Api {
  constructor(private readonly base: string) {}

  /** The key kept for this browser tab (session storage), if one was entered. */
  get key(): string | undefined {
    return sessionStorage.getItem(KEY_STORAGE) ?? undefined;
  }

  set key(value: string | undefined) {
    if (value) sessionStorage.setItem(KEY_STORAGE, value);
    else sessionStorage.removeItem(KEY_STORAGE);
  }

  private url(path: string): string {
    return new URL(`${this.base}${path}`, window.location.href).href;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const key = this.key;
    return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
  }

  private async check(response: Response): Promise<Response> {
    if (response.status === 401) throw new UnauthorizedError('This server needs an API key');
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      let issues: string[] = [];
      try {
        const body = (await response.json()) as { error?: { message?: string; issues?: unknown } };
        if (body.error?.message) message = body.error.message;
        if (Array.isArray(body.error?.issues)) issues = body.error.issues.map(String);
      } catch {
        // Not JSON: the status says enough.
      }
      throw new ApiError(response.status, message, issues);
    }
    return response;
  }

  async get<T>(path: string): Promise<T> {
    const response = await this.check(await fetch(this.url(path), { headers: this.headers() }));
    return (await response.json()) as T;
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    const response = await this.check(
      await fetch(this.url(path), {
        method: 'POST',
        headers: this.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify(body),
      }),
    );
    return (await response.json()) as T;
  }

  /**
   * Sends a JSON request with any method (the config editor's `PUT`,
   * `DELETE`, rollback; a cancel, a schedule's `DELETE`); a 204 answers undefined.
   */
  async send<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: this.headers() };
    if (body !== undefined) {
      init.headers = this.headers({ 'content-type': 'application/json' });
      init.body = JSON.stringify(body);
    }
    const response = await this.check(await fetch(this.url(path), init));
    return (response.status === 204 ? undefined : await response.json()) as T;
  }

  agents(): Promise<{ agents: AgentInfo[]; graph?: GraphInfo; stats?: Record<string, AgentStatsInfo> }> {
    return this.get('/v1/agents');
  }

  /** The newest page of a session's history, or the page just `before` a cursor of a newer page. */
  session(sessionId: string, { before }: { before?: string | undefined } = {}): Promise<SessionBody> {
    const query = before ? `?before=${encodeURIComponent(before)}` : '';
    return this.get(`/v1/sessions/${encodeURIComponent(sessionId)}${query}`);
  }

  /** Recent sessions, or undefined when the server has no session list (404). */
  async sessions(): Promise<SessionSummary[] | undefined> {
    try {
      const body = await this.get<{ sessions?: SessionSummary[] }>('/v1/sessions?limit=50');
      return Array.isArray(body.sessions) ? body.sessions : undefined;
    } catch (error) {
      if (error instanceof ApiError && [404, 405, 501].includes(error.status)) return undefined;
      throw error;
    }
  }

  /** Queues a message as a background turn (`background: true`): the 202 receipt. */
  queue(body: { message: string; sessionId?: string }): Promise<QueuedReceipt> {
    return this.post('/v1/chat', { ...body, background: true });
  }

  /** The latest background turns, newest first (`GET /v1/background-turns`). */
  async backgroundTurns(): Promise<BackgroundTurnInfo[]> {
    return (await this.get<{ data: BackgroundTurnInfo[] }>('/v1/background-turns')).data;
  }

  /** Cancels a queued or running turn. */
  cancelTurn(sessionId: string, turnId: string): Promise<unknown> {
    return this.send(
      'POST',
      `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/cancel`,
    );
  }

  /** The schedules (`GET /v1/schedules`). */
  async schedules(): Promise<ScheduleInfo[]> {
    return (await this.get<{ data: ScheduleInfo[] }>('/v1/schedules')).data;
  }

  /** Creates a schedule running `message` every `every` ms. */
  createSchedule(body: { message: string; every: number; sessionId?: string }): Promise<ScheduleInfo> {
    return this.post('/v1/schedules', body);
  }

  deleteSchedule(id: string): Promise<unknown> {
    return this.send('DELETE', `/v1/schedules/${encodeURIComponent(id)}`);
  }

  resolveApproval(sessionId: string, approvalId: string, decision: 'approve' | 'reject'): Promise<unknown> {
    return this.post(
      `/v1/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(approvalId)}`,
      { decision },
    );
  }

  /** Opens a `GET` stream of Server-Sent Events (after the event `after` names, when given) until `signal` aborts. */
  async stream(path: string, after?: string, signal?: AbortSignal): Promise<Response> {
    const headers = this.headers({ accept: 'text/event-stream' });
    return this.check(
      await fetch(this.url(path), {
        headers: after ? { ...headers, 'last-event-id': after } : headers,
        ...(signal ? { signal } : {}),
      }),
    );
  }

  /** Sends a message and calls `onEvent` with each Server-Sent Event of the turn as it arrives. */
  async chat(
    body: { message: string; sessionId?: string },
    onEvent: (event: StreamEvent) => void,
  ): Promise<void> {
    const response = await this.check(
      await fetch(this.url('/v1/chat'), {
        method: 'POST',
        headers: this.headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
        body: JSON.stringify(body),
      }),
    );
    if (!response.body) throw new ApiError(response.status, 'The server sent no stream');
    await readEventStream(response.body, onEvent);
  }
}

/**
 * Streams a turn's events (after `after`, an event id, when given) until
 * its latest `turn-end`, or until `signal` aborts (the promise then rejects).
 */
export async function followTurn(
  api: Api,
  sessionId: string,
  turnId: string,
  after: string | undefined,
  onEvent: (event: StreamEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/events`;
  const response = await api.stream(path, after, signal);
  if (!response.body) throw new ApiError(response.status, 'The server sent no stream');
  await readEventStream(response.body, onEvent);
}

/** Parses a `text/event-stream` body, calling `onEvent` with each event's JSON data. */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: StreamEvent) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done }).replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data === '') continue;
      try {
        onEvent(JSON.parse(data) as StreamEvent);
      } catch (error) {
        if (error instanceof SyntaxError) continue;
        throw error;
      }
    }
    if (done) return;
  }
}
