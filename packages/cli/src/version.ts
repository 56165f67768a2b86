import { createRequire } from 'node:module';

/** The version of this package, from its package.json (one directory up from src/ and from dist/). */
export const CLI_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string })
  .version;
