import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The repository's root. */
export const ROOT = path.resolve(__dirname, '../..');

/** Folders whose modules end up in the workflow bundle and decide a workflow's commands. */
const SOURCE_FOLDERS = ['workflows', 'domain'];

/** Reads a file by its path relative to the root; tests hand in one that changes a file's text. */
export type SourceReader = (relativePath: string) => string;

const readFromDisk: SourceReader = (relativePath) => readFileSync(path.join(ROOT, relativePath), 'utf8');

/**
 * Modules compiled so far, by path and text: the workflow types share most of theirs, and a test
 * process hashes each type more than once.
 */
const compiledModules = new Map<string, { tokens: string; imports: string[] }>();

/**
 * A module as the bundle would run it: compiled by TypeScript alone (comments and type-only
 * imports gone), then reduced to its tokens, so layout and quoting do not count either.
 */
function compiled(relativePath: string, text: string): { tokens: string; imports: string[] } {
  const key = `${relativePath}\0${text}`;
  let module = compiledModules.get(key);
  if (!module) compiledModules.set(key, (module = compile(relativePath, text)));
  return module;
}

function compile(relativePath: string, text: string): { tokens: string; imports: string[] } {
  const output = ts.transpileModule(text, {
    fileName: relativePath,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      removeComments: true,
    },
  }).outputText;
  const source = ts.createSourceFile('compiled.js', output, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const tokens: string[] = [];
  const visit = (node: ts.Node, next: ts.Node | undefined) => {
    const children = node.getChildren(source);
    if (children.length === 0) {
      // A trailing comma is layout.
      if (node.kind === ts.SyntaxKind.CommaToken && next === undefined) return;
      const text = ts.isStringLiteral(node) ? JSON.stringify(node.text) : node.getText(source);
      if (text) tokens.push(text);
      return;
    }
    children.forEach((child, i) => visit(child, children[i + 1]));
  };
  visit(source, undefined);
  // What is left of the imports after compiling are the ones the module uses as values.
  const imports = ts
    .preProcessFile(output, true, false)
    .importedFiles.map((file) => file.fileName)
    .filter((name) => name.startsWith('.'));
  return { tokens: tokens.join(' '), imports };
}

/** The module a relative specifier names, relative to the root (`x.ts` or `x/index.ts`). */
function resolve(from: string, specifier: string): string | undefined {
  const base = path.posix.join(path.posix.dirname(from), specifier);
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base])
    if (candidate.endsWith('.ts') && existsSync(path.join(ROOT, candidate))) return candidate;
  return undefined;
}

const inSourceFolders = (relativePath: string) => SOURCE_FOLDERS.includes(relativePath.split('/')[0]);

/**
 * The modules a workflow's commands depend on: its own file and every module of workflows/ and
 * domain/ it imports as a value, directly or through others, each with its compiled tokens.
 */
export function workflowSources(
  workflowFile: string,
  read: SourceReader = readFromDisk,
): Array<{ file: string; tokens: string }> {
  const found = new Map<string, string>();
  const pending = [path.posix.normalize(workflowFile)];
  while (pending.length) {
    const file = pending.pop()!;
    if (found.has(file)) continue;
    const { tokens, imports } = compiled(file, read(file));
    found.set(file, tokens);
    for (const specifier of imports) {
      const target = resolve(file, specifier);
      if (target && inSourceFolders(target) && !found.has(target)) pending.push(target);
    }
  }
  return [...found]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([file, tokens]) => ({ file, tokens }));
}

/**
 * The source hash of a workflow type: SHA-256 over its file and the modules it imports as values
 * (see `workflowSources`), as twelve hex digits. Comments, layout and type-only imports leave it
 * alone; anything else in those modules changes it.
 */
export function workflowSourceHash(workflowFile: string, read: SourceReader = readFromDisk): string {
  const hash = createHash('sha256');
  for (const { file, tokens } of workflowSources(workflowFile, read)) hash.update(`${file}\0${tokens}\0`);
  return hash.digest('hex').slice(0, 12);
}
