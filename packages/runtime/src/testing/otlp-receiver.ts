import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { flattenOtlpTraces, type OtlpSpan } from './otlp-spans.js';

/** One request the receiver got. */
export interface OtlpRequest {
  method: string;
  /** The path, e.g. `/api/public/otel/v1/traces` for Langfuse. */
  path: string;
  /** Lower-cased header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The parsed JSON body; undefined for protobuf or unparsable bodies. */
  body?: unknown;
  /** The spans of a JSON trace export (empty otherwise). */
  spans: OtlpSpan[];
  /** Why the body could not be read, if it could not. */
  error?: string;
  /** The body as received (gunzipped), for a body that is not JSON (protobuf). */
  raw?: Buffer;
}

/** A loopback OTLP/HTTP receiver for tests; see {@link createOtlpReceiver}. */
export interface OtlpReceiver {
  /** Base URL, e.g. `http://127.0.0.1:43123`: use it as `LANGFUSE_BASE_URL` or `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string;
  /** Every request received, in order (empty with `record: false`). */
  readonly requests: OtlpRequest[];
  /** How many requests arrived, recorded or not. */
  readonly requestCount: number;
  /** Every span received so far, over all requests. */
  spans(): OtlpSpan[];
  /** Resolves with all spans once `until(spans)` holds; rejects after `timeoutMs` (default 5 000) with what arrived. */
  waitForSpans(until: (spans: OtlpSpan[]) => boolean, options?: { timeoutMs?: number }): Promise<OtlpSpan[]>;
  /** Forgets the requests received so far. */
  reset(): void;
  /** Stops the server. */
  close(): Promise<void>;
}

/** Options of {@link createOtlpReceiver}. */
export interface OtlpReceiverOptions {
  /** Interface to bind (default `127.0.0.1`). */
  host?: string;
  /** Port (default 0: a free one). */
  port?: number;
  /**
   * Decode and keep each request (default true). `false` makes a cheap sink
   * for benchmarks: requests are drained, acknowledged and only counted.
   */
  record?: boolean;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function flatHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function isJson(headers: Record<string, string>): boolean {
  return (headers['content-type'] ?? '').includes('json');
}

function decodeJson(
  raw: Buffer,
  headers: Record<string, string>,
): Pick<OtlpRequest, 'body' | 'spans' | 'error'> {
  try {
    const bytes = headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
    const body: unknown = JSON.parse(bytes.toString('utf8'));
    return { body, spans: flattenOtlpTraces(body) };
  } catch (error) {
    return { spans: [], error: error instanceof Error ? error.message : String(error) };
  }
}

function respond(response: ServerResponse, headers: Record<string, string>, failed: boolean): void {
  if (failed) {
    response
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'bad OTLP body' }));
  } else if ((headers['content-type'] ?? '').includes('protobuf')) {
    // An empty ExportTraceServiceResponse encodes to zero bytes.
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  } else {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }
}

/**
 * Starts a loopback HTTP server that accepts OTLP/HTTP trace exports — what
 * `@langfuse/otel` posts to `${LANGFUSE_BASE_URL}/api/public/otel/v1/traces`
 * and an OTLP exporter to `${OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` — and
 * records each request: path, headers, parsed JSON body and flattened spans.
 * JSON bodies (gzip or not) are decoded; protobuf ones are acknowledged and
 * recorded undecoded.
 *
 * @example
 * ```ts
 * const receiver = await createOtlpReceiver();
 * const tracing = setupTracing({ langfuse: { publicKey: 'pk', secretKey: 'sk', baseUrl: receiver.url } });
 * // … run turns, then:
 * await tracing.forceFlush();
 * const spans = receiver.spans();
 * await receiver.close();
 * ```
 */
export async function createOtlpReceiver({
  host = '127.0.0.1',
  port = 0,
  record = true,
}: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  let requestCount = 0;
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    requestCount++;
    if (!record) {
      request.resume();
      request.on('end', () => respond(response, flatHeaders(request), false));
      return;
    }
    readBody(request).then(
      (raw) => {
        const headers = flatHeaders(request);
        const json = isJson(headers);
        const decoded = json
          ? decodeJson(raw, headers)
          : {
              spans: [],
              error: `not decoded: content-type ${headers['content-type'] ?? 'missing'} (JSON only)`,
              raw: headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw,
            };
        const url = new URL(request.url ?? '/', 'http://receiver');
        requests.push({ method: request.method ?? 'GET', path: url.pathname, headers, ...decoded });
        respond(response, headers, json && decoded.error !== undefined);
        for (const wake of waiters) wake();
      },
      () => response.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const spans = () => requests.flatMap((request) => request.spans);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    requests,
    get requestCount() {
      return requestCount;
    },
    spans,
    waitForSpans: (until, { timeoutMs = 5_000 } = {}) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!until(spans())) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(spans());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `OTLP receiver: condition not met within ${timeoutMs} ms; ${spans().length} spans received`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    reset: () => {
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
