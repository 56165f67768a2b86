/**
 * The TypeScript API reference: TypeDoc (with typedoc-plugin-markdown) over
 * the entry points of @switchboard/core, @switchboard/runtime (and its
 * subpaths) and @switchboard/orchestrators, one markdown page per entry point.
 *
 * TypeDoc 0.28 runs on TypeScript 5.0 to 6.0 and TypeScript 7 has no
 * JavaScript compiler API, so this package has a TypeScript 6 of its own
 * (the repository type-checks with TypeScript 7).
 */
import { fileURLToPath } from 'node:url';
import { Application, ReflectionKind } from 'typedoc';
import { entryPoints } from './entry-points.js';

/** Writes the reference's pages into `out`; returns the entry points' import paths, in order. */
export async function writeTypeScriptReference(out: string): Promise<string[]> {
  const entries = entryPoints();
  const app = await Application.bootstrapWithPlugins({
    entryPoints: entries.map((entry) => entry.file),
    tsconfig: fileURLToPath(new URL('../tsconfig.typedoc.json', import.meta.url)),
    plugin: ['typedoc-plugin-markdown'],
    out,
    name: 'TypeScript API',
    readme: 'none',
    disableSources: true,
    excludeInternal: true,
    excludePrivate: true,
    excludeProtected: false,
    // Members inherited from Node's own types (Error's captureStackTrace, …) are Node's to document.
    excludeExternals: true,
    skipErrorChecking: true,
    logLevel: 'Warn',
    // typedoc-plugin-markdown: one page per entry point, named index.md within its folder.
    outputFileStrategy: 'modules',
    entryFileName: 'index',
    hidePageHeader: true,
    hideBreadcrumbs: true,
    // The pages are Vue templates to VitePress: a comment's `<T>` or `{{ }}` must stay text.
    sanitizeComments: true,
  } as Record<string, unknown>);
  const project = await app.convert();
  if (!project) throw new Error('TypeDoc could not convert the entry points (see the messages above)');
  // TypeDoc names a module after its path ("runtime/src/redis"); a reader imports "@switchboard/runtime/redis".
  for (const module of project.getReflectionsByKind(ReflectionKind.Module)) {
    const [name, , ...rest] = module.name.split('/');
    const path = rest.filter((part) => part !== 'index').join('/');
    module.name = `@switchboard/${name}${path ? `/${path}` : ''}`;
  }
  await app.generateOutputs(project);
  return entries.map((entry) => entry.specifier);
}
