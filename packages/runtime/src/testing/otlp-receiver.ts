import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeOtlpTraceRequest } from './otlp-protobuf-decode.js';
import { flattenOtlpTraces, type OtlpSpan } from './otlp-spans.js';

/** One request the receiver got. */
export interface OtlpRequest {
  method: string;
  /** The path, e.g. `/api/public/otel/v1/traces` for Langfuse. */
  path: string;
  /** Lower-cased header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /**
   * The decoded body: the parsed JSON, or for a protobuf trace export the same
   * object OpenTelemetry's OTLP/JSON serialiser writes (see
   * `decodeOtlpTraceRequest`); undefined for a body that could not be decoded.
   */
  body?: unknown;
  /** The spans of a trace export, JSON or protobuf (empty otherwise). */
  spans: OtlpSpan[];
  /** Why the body could not be read, if it could not. */
  error?: string;
  /** The body as received (gunzipped), for a body that is not JSON (protobuf, decoded or not). */
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

type Decoded = Pick<OtlpRequest, 'body' | 'spans' | 'error' | 'raw'>;

function isJson(headers: Record<string, string>): boolean {
  return (headers['content-type'] ?? '').includes('json');
}

function isProtobuf(headers: Record<string, string>): boolean {
  return (headers['content-type'] ?? '').includes('protobuf');
}

/** Metrics and logs exports share the receiver but are not trace requests: their protobuf is left undecoded. */
function isOtherSignal(path: string): boolean {
  return path.endsWith('/v1/metrics') || path.endsWith('/v1/logs');
}

function gunzipped(raw: Buffer, headers: Record<string, string>): Buffer {
  return headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function decodeJson(raw: Buffer, headers: Record<string, string>): Decoded {
  try {
    const body: unknown = JSON.parse(gunzipped(raw, headers).toString('utf8'));
    return { body, spans: flattenOtlpTraces(body) };
  } catch (error) {
    return { spans: [], error: messageOf(error) };
  }
}

function decodeProtobuf(raw: Buffer, headers: Record<string, string>): Decoded {
  let bytes = raw;
  try {
    bytes = gunzipped(raw, headers);
    const body = decodeOtlpTraceRequest(bytes);
    return { body, spans: flattenOtlpTraces(body), raw: bytes };
  } catch (error) {
    return { spans: [], error: messageOf(error), raw: bytes };
  }
}

function undecoded(raw: Buffer, headers: Record<string, string>, path: string): Decoded {
  const what = isProtobuf(headers)
    ? `protobuf at ${path} (trace exports only)`
    : `content-type ${headers['content-type'] ?? 'missing'} (JSON and protobuf only)`;
  try {
    return { spans: [], error: `not decoded: ${what}`, raw: gunzipped(raw, headers) };
  } catch (error) {
    return { spans: [], error: `not decoded: ${what}; ${messageOf(error)}`, raw };
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
 * records each request: path, headers, decoded body and flattened spans.
 * JSON bodies and protobuf trace exports (`application/x-protobuf`), gzip or
 * not, are decoded alike: a protobuf body becomes the object OpenTelemetry's
 * OTLP/JSON serialiser writes for the same spans, and its bytes stay in
 * `raw`. A JSON or protobuf trace body that cannot be decoded is recorded
 * with `error` and answered 400. Protobuf metrics or logs exports are
 * acknowledged and kept undecoded.
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
        const path = new URL(request.url ?? '/', 'http://receiver').pathname;
        const decoder = isJson(headers)
          ? decodeJson
          : isProtobuf(headers) && !isOtherSignal(path)
            ? decodeProtobuf
            : undefined;
        const decoded = decoder ? decoder(raw, headers) : undecoded(raw, headers, path);
        requests.push({ method: request.method ?? 'GET', path, headers, ...decoded });
        respond(response, headers, decoder !== undefined && decoded.error !== undefined);
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
          const failed = requests.findLast((request) => request.error !== undefined);
          reject(
            new Error(
              `OTLP receiver: condition not met within ${timeoutMs} ms; ${spans().length} spans received${failed ? `; the last request that could not be read: ${failed.error}` : ''}`,
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
