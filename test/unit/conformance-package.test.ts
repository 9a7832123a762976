import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

/**
 * The npm package `ixapi-conformance` (conformance/package.json) against the repository it is built
 * in: it depends on exactly the packages its compiled code imports, in the ranges the repository
 * installs and tests, and runs where the repository does.
 */

const ROOT = path.resolve(__dirname, '../..');

interface Manifest {
  license: string;
  engines: { node: string };
  dependencies: Record<string, string>;
}

const read = (file: string): Manifest => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as Manifest;

/** The package an import specifier names (`ajv/dist/x` -> `ajv`, `@scope/name/x` -> `@scope/name`). */
const packageOf = (specifier: string): string =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/**
 * The packages the sources that conformance/tsconfig.package.json compiles import: its root files
 * and every module they import by a relative path, as the compiler would take them in.
 */
function importedPackages(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'conformance/tsconfig.package.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) =>
        assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    },
  );
  assert.ok(config);
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [...config.fileNames];
  while (pending.length) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const { fileName: name } of ts.preProcessFile(readFileSync(file, 'utf8')).importedFiles) {
      if (name.startsWith('.')) {
        const base = path.resolve(path.dirname(file), name);
        const module = [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => existsSync(candidate));
        if (module) pending.push(module);
        else assert.ok(existsSync(base), `${file} imports ${name}, which is not there`);
      } else if (!name.startsWith('node:') && !builtinModules.includes(name)) packages.add(packageOf(name));
    }
  }
  assert.ok(seen.size > 10, `the package's sources: ${[...seen].join(', ')}`);
  return [...packages].sort();
}

describe('the conformance package', () => {
  const repository = read('package.json');
  const suite = read('conformance/package.json');

  it('depends on what its code imports, in the ranges the repository installs', () => {
    assert.deepEqual(Object.keys(suite.dependencies).sort(), importedPackages());
    for (const [name, range] of Object.entries(suite.dependencies))
      assert.equal(
        range,
        repository.dependencies[name],
        `${name}: ${range} here, ${repository.dependencies[name]} in the repository`,
      );
  });

  it('runs where the repository runs, under its licence', () => {
    assert.equal(suite.engines.node, repository.engines.node);
    assert.equal(suite.license, repository.license);
  });
});
