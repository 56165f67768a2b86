import { createRequire } from 'node:module';
import { ConfigurationError } from '@switchboard/core';

/**
 * Throws a `ConfigurationError` unless `path`, the value of option `option`
 * (e.g. `mcp.path`), is a plain path (letters, digits, '.', '_', '~', '-'
 * between slashes) that hides none of the API's own routes (`/v1`,
 * `/.well-known`).
 */
export function checkMountPath(option: string, path: string, example: string): void {
  if (!/^(?:\/[A-Za-z0-9._~-]+)+$/.test(path))
    throw new ConfigurationError({
      message: `${option} must be a path such as '${example}' (letters, digits, '.', '_', '~', '-' between slashes), not '${path}'`,
    });
  if (path === '/v1' || path.startsWith('/v1/') || path.startsWith('/.well-known'))
    throw new ConfigurationError({ message: `${option} '${path}' would hide another route` });
}

/**
 * Throws a `ConfigurationError` naming the package and `option` when the
 * optional peer `specifier` is not installed: checked when the app starts,
 * although the route loads it only on its first request.
 */
export function requirePeer(specifier: string, packageName: string, option: string): void {
  try {
    createRequire(import.meta.url).resolve(specifier);
  } catch (error) {
    throw new ConfigurationError({
      message: `${option} needs the ${packageName} package: install it, or turn ${option} off`,
      cause: error,
    });
  }
}
