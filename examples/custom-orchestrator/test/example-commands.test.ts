/**
 * `pnpm --filter <name>` with a name that matches no package prints "No
 * projects matched" and exits 0, so a wrong name in the documentation fails
 * silently. These tests read every `pnpm --filter` command in the READMEs, the
 * docs pages and the root scripts and check it names a workspace package that has the script.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface WorkspacePackage {
  folder: string;
  name: string;
  scripts: Record<string, string>;
}

/** The packages of `pnpm-workspace.yaml` (`folder/*` and plain folders), by name. */
function workspacePackages(): Map<string, WorkspacePackage> {
  const patterns = [...read('pnpm-workspace.yaml').matchAll(/^\s+-\s+(\S+)\s*$/gm)].map((match) => match[1]!);
  const folders = patterns.flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
      : [pattern],
  );
  const packages = new Map<string, WorkspacePackage>();
  for (const folder of folders) {
    if (!existsSync(join(root, folder, 'package.json'))) continue;
    const { name, scripts = {} } = JSON.parse(read(`${folder}/package.json`)) as WorkspacePackage;
    packages.set(name, { folder, name, scripts });
  }
  return packages;
}

/** Every `pnpm --filter <name> [run] <script>` in a text, with where it is. */
function filterCommands(text: string, file: string) {
  return [...text.matchAll(/pnpm\s+--filter[\s=]+([@\w./-]+)\s+(?:run\s+)?([\w:-]+)/g)].map((match) => ({
    file,
    name: match[1]!,
    script: match[2]!,
  }));
}

const examples = readdirSync(join(root, 'examples')).filter((folder) =>
  existsSync(join(root, 'examples', folder, 'package.json')),
);
/** The hand-written pages of the docs site (docs/reference/ is generated, but for the committed error codes). */
const docsPages = ['docs', 'docs/concepts', 'docs/guides'].flatMap((folder) =>
  readdirSync(join(root, folder))
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .map((file) => `${folder}/${file}`),
);
const documents = [
  'README.md',
  ...docsPages,
  ...examples.map((folder) => `examples/${folder}/README.md`).filter((path) => existsSync(join(root, path))),
];
const commands = [
  ...documents.flatMap((path) => filterCommands(read(path), path)),
  ...Object.values((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts).flatMap(
    (script) => filterCommands(script, 'package.json'),
  ),
];

describe('pnpm --filter commands in the documentation', () => {
  const packages = workspacePackages();

  it('are there to check', () => {
    expect(commands.length).toBeGreaterThanOrEqual(examples.length);
  });

  it.each(commands)(
    '$file: pnpm --filter $name $script names a package with that script',
    ({ name, script }) => {
      const found = packages.get(name);
      expect(
        found,
        `no workspace package is named ${name}; names: ${[...packages.keys()].join(', ')}`,
      ).toBeDefined();
      expect(Object.keys(found!.scripts)).toContain(script);
    },
  );

  it('list every example with its start command on the Examples page', () => {
    const section = read('docs/examples.md');
    for (const folder of examples) {
      const { name } = JSON.parse(read(`examples/${folder}/package.json`)) as { name: string };
      expect(section, folder).toContain(`(../examples/${folder})`);
      expect(section, folder).toContain(`pnpm --filter ${name} start`);
    }
  });
});
