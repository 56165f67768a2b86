import type { Attributes, Histogram, Meter } from '@opentelemetry/api';

/** OpenTelemetry's advised boundaries for `http.server.request.duration`, in seconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60];

/** The methods kept as they are; any other is recorded as `_OTHER`, as the semantic conventions ask. */
const KNOWN_METHODS = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'CONNECT',
  'TRACE',
]);

/** At most this many attribute sets are kept; past it a set is made per request (routes are finite). */
const MAX_CACHED = 1_000;

/**
 * The HTTP server's request duration, by route template, method and status
 * code: OpenTelemetry's `http.server.request.duration` (served to Prometheus
 * as `http_server_request_duration_seconds`). Recorded by the request log
 * middleware, which already times every request, so every answer counts:
 * refusals by auth, 400s, 404s and 409s included.
 */
export class HttpMetrics {
  readonly #duration: Histogram;
  /** Attribute sets by method, route and status, made once rather than per request. */
  readonly #attributes = new Map<string, Attributes>();

  constructor(meter: Meter) {
    this.#duration = meter.createHistogram('http.server.request.duration', {
      description: 'Duration of HTTP server requests, by route template, method and status code',
      unit: 's',
      advice: { explicitBucketBoundaries: HTTP_BUCKETS },
    });
  }

  /** Records one answered request; `route` is the matched route's template, null when none matched. */
  requestEnded(method: string, route: string | null, status: number, seconds: number): void {
    const key = `${method} ${route ?? ''} ${status}`;
    let attributes = this.#attributes.get(key);
    if (!attributes) {
      attributes = {
        'http.request.method': KNOWN_METHODS.has(method) ? method : '_OTHER',
        'http.response.status_code': status,
      };
      // Without a matched route the path stays out: a scanner's paths would be unbounded labels.
      if (route !== null) attributes['http.route'] = route;
      if (this.#attributes.size < MAX_CACHED && KNOWN_METHODS.has(method))
        this.#attributes.set(key, attributes);
    }
    this.#duration.record(seconds, attributes);
  }
}
