import { transform } from 'esbuild';
import { defineConfig, type Plugin } from 'vitest/config';

/**
 * Vite's default TypeScript transform leaves TC39 (stage 3) decorators in
 * place and Node 20 cannot parse them; esbuild lowers them. Only files that
 * contain a decorator are re-transformed.
 */
function standardDecorators(): Plugin {
  return {
    name: 'standard-decorators',
    enforce: 'pre',
    async transform(code, id) {
      if (!/\.[cm]?ts$/.test(id) || !/(^|[\s;{}])@[A-Za-z_$]/.test(code)) return null;
      const result = await transform(code, {
        loader: 'ts',
        target: 'es2022',
        format: 'esm',
        sourcemap: true,
        sourcefile: id,
      });
      return { code: result.code, map: result.map };
    },
  };
}

export default defineConfig({
  plugins: [standardDecorators()],
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'docs/test/**/*.test.ts',
    ],
    testTimeout: 30_000,
    // A polled condition (a browser showing a reply) may take a while on a loaded 2-core machine: wait up to 10 s.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
