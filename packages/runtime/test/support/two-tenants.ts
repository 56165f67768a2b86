import { apiKeys } from '../../src/server/auth.js';

/** A key of tenant `acme` (name `acme-web`) and one of tenant `globex` (name `globex-bot`), for tests of tenant isolation. */
export const ACME_KEY = 'sk-acme-0123456789abcdef0123456789abcdef';
export const GLOBEX_KEY = 'sk-globex-0123456789abcdef0123456789abcdef';

/** The app's `auth` with {@link ACME_KEY} and {@link GLOBEX_KEY}. */
export const twoTenants = apiKeys({
  keys: {
    [ACME_KEY]: { tenantId: 'acme', name: 'acme-web' },
    [GLOBEX_KEY]: { tenantId: 'globex', name: 'globex-bot' },
  },
});

/** The headers that send `key`. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
