import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunSummary } from '../../conformance/index';
import { scratchFolder } from '../support/shared-stack';
import { stack } from '../support/stack';

const ROOT = path.resolve(__dirname, '../..');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a command that must behave as it would outside this repository: without what
 * `npm run` and the test runner put into it (the project's npm settings, tsx's loader).
 */
function outsideEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries({ ...process.env, NO_COLOR: '1' }).filter(
      ([name]) => !/^npm_/i.test(name) && name !== 'NODE_OPTIONS',
    ),
  );
}

function run(command: string, args: string[], cwd: string, timeout = 180_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: outsideEnvironment(), timeout }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Every file below a folder, relative to it, with `/` between folders. */
function filesBelow(folder: string, prefix = ''): string[] {
  return readdirSync(folder).flatMap((name) => {
    const file = path.join(folder, name);
    return statSync(file).isDirectory() ? filesBelow(file, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

/**
 * What the package may hold: its manifest and documents, the suite compiled (JavaScript and
 * declarations) and the spec module it reads the OpenAPI document with, and that document.
 */
const PACKAGED = [
  /^package\.json$/,
  /^README\.md$/,
  /^CHECKS\.md$/,
  /^dist\/conformance\/([\w-]+\/)*[\w-]+\.(js|d\.ts)$/,
  /^dist\/spec\/(index|ajv|types)\.(js|d\.ts)$/,
  /^dist\/spec\/openapi\.yaml$/,
];

describe('the conformance suite as an npm package', function () {
  this.timeout(300_000);
  const dir = scratchFolder('conformance-package');
  const consumer = path.join(dir, 'consumer');
  let tarball: string;
  let entries: string[];

  before(async function () {
    const packed = await run(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'scripts/pack-conformance.ts'), path.join(dir, 'tarballs')],
      ROOT,
    );
    assert.equal(packed.code, 0, packed.stdout + packed.stderr);
    const printed = /^(.+\.tgz): [\d.]+ KiB \((\d+) bytes\), (\d+) files$/m.exec(packed.stdout);
    assert.ok(printed, `the pack script says where the tarball is: ${packed.stdout}`);
    tarball = path.resolve(ROOT, printed[1]);
    assert.equal(statSync(tarball).size, Number(printed[2]));
    const listed = await run('tar', ['-tzf', tarball], dir);
    assert.equal(listed.code, 0, listed.stderr);
    entries = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((entry) => entry.replace(/^package\//, ''));
    assert.equal(entries.length, Number(printed[3]));

    mkdirSync(consumer);
    writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ private: true }));
    const installed = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball],
      consumer,
    );
    assert.equal(installed.code, 0, installed.stdout + installed.stderr);
  });

  it('holds the compiled CLI and library, the OpenAPI document and the docs, and nothing of the server', () => {
    for (const file of [
      'package.json',
      'README.md',
      'CHECKS.md',
      'dist/conformance/cli.js',
      'dist/conformance/index.js',
      'dist/conformance/index.d.ts',
      'dist/spec/openapi.yaml',
    ])
      assert.ok(entries.includes(file), `the tarball holds no ${file}`);
    const strays = entries.filter((entry) => !PACKAGED.some((pattern) => pattern.test(entry)));
    assert.deepEqual(strays, [], 'the tarball holds sources, tests or files of the server');
    assert.ok(!entries.some((entry) => /(?<!\.d)\.ts$/.test(entry)), 'TypeScript sources');
    assert.ok(!entries.some((entry) => /(^|\/)(test|api|db|workflows|worker|activities)\//.test(entry)));
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'conformance/package.json'), 'utf8')) as {
      bin: Record<string, string>;
      main: string;
      types: string;
    };
    for (const file of [manifest.bin['ixapi-conformance'], manifest.main, manifest.types])
      assert.ok(entries.includes(file), `package.json names ${file}, which the tarball lacks`);
  });

  it('installs into a folder of its own without a file of the server, the library importable', async () => {
    const installed = path.join(consumer, 'node_modules', 'ixapi-conformance');
    const strays = filesBelow(installed).filter((file) => !PACKAGED.some((pattern) => pattern.test(file)));
    assert.deepEqual(strays, []);
    const imported = await run(
      process.execPath,
      [
        '-e',
        `const m = require('ixapi-conformance');
         process.stdout.write(JSON.stringify({ at: require.resolve('ixapi-conformance'), runConformance: typeof m.runConformance, passed: typeof m.passed }));`,
      ],
      consumer,
    );
    assert.equal(imported.code, 0, imported.stderr);
    const library = JSON.parse(imported.stdout) as { at: string; runConformance: string; passed: string };
    assert.equal(library.at, path.join(installed, 'dist/conformance/index.js'));
    assert.equal(library.runConformance, 'function');
    assert.equal(library.passed, 'function');
  });

  it('runs its CLI through the npm bin link against a server', async () => {
    const bin = path.join(consumer, 'node_modules', '.bin', 'ixapi-conformance');
    const help = await run(bin, ['--help'], consumer);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /ixapi-conformance --base-url URL --credentials FILE/);

    const primary = stack().credentials.find(
      (credential) => credential.accountId === 'acc-transit-partners',
    )!;
    const credentials = path.join(dir, 'credentials.json');
    writeFileSync(
      credentials,
      JSON.stringify({ primary: { api_key: primary.apiKey, api_secret: primary.apiSecret } }),
    );
    const report = path.join(dir, 'report.json');
    const result = await run(
      bin,
      [
        '--base-url',
        stack().baseUrl,
        '--credentials',
        credentials,
        '--only',
        'DISC-,AUTH-001',
        '--json',
        report,
      ],
      consumer,
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const summary = JSON.parse(readFileSync(report, 'utf8')) as RunSummary;
    const judged = Object.fromEntries(summary.results.map((r) => [r.id, r.outcome]));
    assert.ok(
      summary.results.some((r) => r.id.startsWith('DISC-')),
      `no DISC- check ran: ${JSON.stringify(judged)}`,
    );
    assert.ok(
      summary.results.every((r) => r.id === 'AUTH-001' || r.id.startsWith('DISC-')),
      JSON.stringify(judged),
    );
    assert.equal(judged['AUTH-001'], 'PASS');
    for (const [id, outcome] of Object.entries(judged)) assert.equal(outcome, 'PASS', id);
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'conformance/package.json'), 'utf8')) as {
      version: string;
    };
    assert.deepEqual(summary.tool, { name: 'ixapi-conformance', version });
    assert.equal(summary.schemaRevision, '2.6.0');
  });
});
