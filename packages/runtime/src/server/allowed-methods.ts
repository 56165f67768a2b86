/**
 * The methods each route of the API answers, for the 405 a request with
 * another method gets (with `Allow`), looked up only when no route matched:
 * the routes themselves stay the router's only entries, so a request matches
 * its own route alone, which Hono calls directly (see `loggedFetch`).
 * Registering a 405 handler per path and method instead took a third of an
 * app's start-up (measured: 0.35 of 1.06 ms a mount, about 800 entries).
 *
 * @module
 */

/** A route's path as Hono writes it (`/v1/sessions/:id`) and the methods it answers. */
export type RouteMethods = Readonly<Record<string, readonly string[]>>;

/** A path's route: its pattern, the methods it answers and the path's parameters. */
export interface RouteOfPath {
  route: string;
  methods: readonly string[];
  /** The value of each `:name` of the pattern in the path. */
  params: Readonly<Record<string, string>>;
}

/** Finds a path's route; undefined when no route has that path. */
export type AllowedMethods = (path: string) => RouteOfPath | undefined;

const SPECIAL = /[.*+?^${}()|[\]\\]/g;

/** A matcher of `routes`' paths: each `:name` stands for one path segment, as in Hono (strict about a trailing `/`). */
export function allowedMethods(routes: RouteMethods): AllowedMethods {
  const compiled = Object.entries(routes).map(
    ([route, methods]) =>
      [
        new RegExp(
          `^${route
            .split('/')
            .map((segment) =>
              segment.startsWith(':') ? `(?<${segment.slice(1)}>[^/]+)` : segment.replace(SPECIAL, '\\$&'),
            )
            .join('/')}$`,
        ),
        route,
        methods,
      ] as const,
  );
  return (path) => {
    for (const [pattern, route, methods] of compiled) {
      const found = pattern.exec(path);
      if (found) return { route, methods, params: { ...found.groups } };
    }
    return undefined;
  };
}
