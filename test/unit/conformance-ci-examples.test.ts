import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { credentialsFromEnvironment, OPTIONS } from '../../conformance/cli';

/**
 * The CI examples third parties copy (conformance/examples/) run against a stand-in for the suite:
 * every option they pass must be one the CLI takes, every credential variable one it reads, and
 * every exit code must reach the CI system with its meaning. So the examples cannot go stale.
 */

const ROOT = path.resolve(__dirname, '../..');
const EXAMPLES = path.join(ROOT, 'conformance/examples');
const WORKFLOW_FILE = path.join(EXAMPLES, 'github-actions.yml');
const SCRIPT_FILE = path.join(EXAMPLES, 'ci.sh');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string | number | boolean>;
}
interface Job {
  if?: string;
  environment?: string;
  env?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  env?: Record<string, string>;
  jobs: Record<string, Job>;
}

/** What the stand-in for `npx … ixapi-conformance` saw: its own arguments and the suite's. */
interface Call {
  npx: string[];
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/**
 * A folder with stand-ins for npm and npx on PATH. The npx one records each call and answers as the
 * suite would with FAKE_EXIT (FAKE_CLEANUP_EXIT for cleanup); given --ledger, it writes the ledger.
 */
function fakeTools(): { dir: string; bin: string; calls: () => Call[]; npm: () => string[][] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'ixapi-ci-example-'));
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const log = path.join(dir, 'calls.jsonl');
  const npx = `#!${process.execPath}
const fs = require('node:fs');
const argv = process.argv.slice(2);
const at = argv.indexOf('ixapi-conformance');
if (at === -1) { console.error('npx called without ixapi-conformance: ' + argv.join(' ')); process.exit(127); }
const args = argv.slice(at + 1);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(IXAPI|CONFORMANCE)_/.test(k)));
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ npx: argv.slice(0, at), args, env, cwd: process.cwd() }) + '\\n');
const ledger = args.indexOf('--ledger');
if (ledger !== -1 && args[0] !== 'cleanup') fs.writeFileSync(args[ledger + 1], '');
process.exit(Number(args[0] === 'cleanup' ? process.env.FAKE_CLEANUP_EXIT ?? 0 : process.env.FAKE_EXIT ?? 0));
`;
  const npm = `#!${process.execPath}
require('node:fs').appendFileSync(${JSON.stringify(path.join(dir, 'npm.jsonl'))}, JSON.stringify(process.argv.slice(2)) + '\\n');
`;
  for (const [name, text] of Object.entries({ npx, npm })) {
    writeFileSync(path.join(bin, name), text);
    chmodSync(path.join(bin, name), 0o755);
  }
  const lines = (file: string) => {
    try {
      return readFileSync(path.join(dir, file), 'utf8').trim().split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return {
    dir,
    bin,
    calls: () => lines('calls.jsonl').map((line) => JSON.parse(line) as Call),
    npm: () => lines('npm.jsonl').map((line) => JSON.parse(line) as string[]),
  };
}

/** The suite's arguments as its CLI reads them; throws, as the CLI does, on an option it lacks. */
function parsed(args: string[]) {
  return parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
}

/** A stand-in for each `${{ secrets.X }}` or `${{ vars.X }}` a workflow's env takes its value from. */
function resolved(env: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => {
      const reference = /^\$\{\{\s*(?:secrets|vars)\.(\w+)\s*\}\}$/.exec(value);
      return [name, reference ? `value-of-${reference[1]}` : value];
    }),
  );
}

/** Runs a step's script as GitHub's runners do (`bash --noprofile --norc -eo pipefail`). */
function runStep(job: Job, step: Step, workflow: Workflow, extra: Record<string, string> = {}) {
  const tools = fakeTools();
  const workspace = path.join(tools.dir, 'workspace');
  mkdirSync(workspace);
  const script = path.join(tools.dir, 'step.sh');
  writeFileSync(script, step.run ?? '');
  const run = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
    cwd: workspace,
    encoding: 'utf8',
    env: {
      PATH: `${tools.bin}:${process.env.PATH}`,
      HOME: tools.dir,
      RUNNER_TEMP: path.join(tools.dir, 'runner-temp'),
      GITHUB_WORKSPACE: workspace,
      ...resolved(workflow.env),
      ...resolved(job.env),
      ...resolved(step.env),
      ...extra,
    },
  });
  const calls = tools.calls();
  rmSync(tools.dir, { recursive: true, force: true });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr, calls };
}

/** Every IXAPI_ name the CLI reads is one of a pair; given the pair (and a primary), it is used. */
function cliReads(name: string): boolean {
  const match = /^IXAPI_([A-Z]+)_(KEY|SECRET)$/.exec(name);
  if (!match) return false;
  const partner = `IXAPI_${match[1]}_${match[2] === 'KEY' ? 'SECRET' : 'KEY'}`;
  const env = { IXAPI_PRIMARY_KEY: 'p', IXAPI_PRIMARY_SECRET: 'q', [partner]: 'partner', [name]: 'this one' };
  try {
    const credentials = Object.values(credentialsFromEnvironment(env));
    return credentials.some((c) => c?.api_key === 'this one' || c?.api_secret === 'this one');
  } catch {
    return false;
  }
}

/** The npm and npx options the examples use, which are not the suite's. */
const NPM_OPTIONS = new Set(['--prefix', '--no-install', '--no-audit', '--no-fund']);

describe('the CI examples', () => {
  const workflowText = readFileSync(WORKFLOW_FILE, 'utf8');
  const scriptText = readFileSync(SCRIPT_FILE, 'utf8');
  const workflow = YAML.parse(workflowText) as Workflow;

  it('name only options the CLI takes, in commands and comments alike', () => {
    for (const [file, text] of [
      [WORKFLOW_FILE, workflowText],
      [SCRIPT_FILE, scriptText],
    ]) {
      const options = new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => `--${m[1]}`));
      assert.ok(options.size > 5, `${file} names options`);
      for (const option of options) {
        if (NPM_OPTIONS.has(option)) continue;
        assert.ok(option.slice(2) in OPTIONS, `${path.basename(file)} uses ${option}, which the CLI lacks`);
      }
    }
    assert.ok(!cliReads('IXAPI_TERTIARY_KEY'), 'a name the CLI does not read is told apart');
  });

  it('name only credential variables the CLI reads', () => {
    for (const [file, text] of [
      [WORKFLOW_FILE, workflowText],
      [SCRIPT_FILE, scriptText],
    ]) {
      const names = new Set(text.match(/\bIXAPI_[A-Z_]+\b/g));
      for (const name of [
        'IXAPI_PRIMARY_KEY',
        'IXAPI_PRIMARY_SECRET',
        'IXAPI_SECONDARY_KEY',
        'IXAPI_SECONDARY_SECRET',
      ])
        assert.ok(names.has(name), `${path.basename(file)} names ${name}`);
      for (const name of names)
        assert.ok(cliReads(name), `${path.basename(file)} names ${name}, which the CLI does not read`);
    }
  });

  describe('github-actions.yml', () => {
    const conformanceStep = (job: Job) => job.steps.find((s) => s.run?.includes('ixapi-conformance \\'))!;

    it('runs the read profile on pushes and on a schedule, the full one on staging only', () => {
      assert.ok('push' in workflow.on && 'schedule' in workflow.on && 'workflow_dispatch' in workflow.on);
      const [schedule] = workflow.on.schedule as Array<{ cron: string }>;
      assert.match(schedule.cron, /^\S+ \S+ \S+ \S+ \S+$/);
      assert.deepEqual(Object.keys(workflow.jobs), ['read', 'full']);
      const { read, full } = workflow.jobs;
      assert.equal(read.if, undefined, 'the read profile always runs');
      assert.match(full.if!, /vars\.CONFORMANCE_STAGING_URL != ''/);
      assert.match(full.if!, /github\.event_name == 'schedule' \|\| inputs\.full/);
      assert.equal(full.environment, 'staging');
      assert.equal(full.env?.CONFORMANCE_BASE_URL, '${{ vars.CONFORMANCE_STAGING_URL }}');
      assert.equal(read.env?.CONFORMANCE_BASE_URL, '${{ vars.CONFORMANCE_BASE_URL }}');
      assert.equal(workflow.permissions.checks, 'write', 'the test report is a check run');
      for (const job of [read, full]) {
        const node = job.steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
        assert.equal(node?.with?.['node-version'], 20);
        const install = job.steps.find((s) => s.run?.startsWith('npm install'));
        assert.ok(install?.run?.includes('"./$CONFORMANCE_TARBALL"'));
      }
      assert.match(workflow.env!.CONFORMANCE_TARBALL, /(^|\/)ixapi-conformance-\d+\.\d+\.\d+\.tgz$/);
      // Secrets reach only the steps that call the API: not the installation, whose packages run scripts.
      for (const job of [read, full]) {
        assert.ok(!JSON.stringify(job.env ?? {}).includes('secrets.'), 'no secret in a job-wide environment');
        for (const step of job.steps) {
          const secrets = JSON.stringify(step.env ?? {}).includes('secrets.');
          assert.equal(secrets, /\bnpx\b/.test(step.run ?? ''), step.name ?? step.uses);
        }
      }
    });

    for (const [jobName, profile] of [
      ['read', 'read'],
      ['full', 'full'],
    ] as const) {
      it(`passes the ${jobName} job's options and secrets to the suite, and writes every report`, () => {
        const job = workflow.jobs[jobName];
        const { code, calls, stderr } = runStep(job, conformanceStep(job), workflow);
        assert.equal(code, 0, stderr);
        assert.equal(calls.length, 1);
        const [call] = calls;
        assert.ok(call.npx.includes('--no-install'), 'npx never fetches a package of that name');
        const { values, positionals } = parsed(call.args);
        assert.deepEqual(positionals, []);
        assert.equal(values.profile, profile);
        const url = profile === 'full' ? 'CONFORMANCE_STAGING_URL' : 'CONFORMANCE_BASE_URL';
        assert.equal(values['base-url'], `value-of-${url}`);
        assert.equal(values.credentials, undefined, 'credentials come from the environment');
        assert.deepEqual(credentialsFromEnvironment(call.env), {
          primary: { api_key: 'value-of-IXAPI_PRIMARY_KEY', api_secret: 'value-of-IXAPI_PRIMARY_SECRET' },
          secondary: {
            api_key: 'value-of-IXAPI_SECONDARY_KEY',
            api_secret: 'value-of-IXAPI_SECONDARY_SECRET',
          },
        });
        // The reports land in the folder kept as an artefact, and the JUnit one is published.
        const upload = job.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
        assert.equal(upload.if, '${{ !cancelled() }}');
        for (const report of [values.junit, values.html, values.json])
          assert.ok(report?.startsWith(String(upload.with?.path)), `${report} is uploaded`);
        const publish = job.steps.find((s) => s.uses?.startsWith('dorny/test-reporter@'))!;
        assert.equal(publish.with?.path, values.junit);
        assert.equal(publish.with?.reporter, 'java-junit');
        assert.ok(publish.if?.includes(`hashFiles('${values.junit}')`));
        if (profile === 'full') {
          const cleanup = job.steps.find((s) => s.run?.includes(' cleanup '))!;
          assert.match(cleanup.if!, /always\(\)/);
          const removal = runStep(job, cleanup, workflow);
          assert.equal(removal.code, 0, removal.stderr);
          const after = parsed(removal.calls[0].args);
          assert.deepEqual(after.positionals, ['cleanup']);
          assert.equal(after.values.ledger, values.ledger);
          assert.ok(cleanup.if?.includes(`hashFiles('${values.ledger}')`));
          assert.equal(after.values['base-url'], values['base-url']);
        }
      });
    }

    it('fails the job with the exit code, and says what each code means', () => {
      for (const job of Object.values(workflow.jobs)) {
        const step = conformanceStep(job);
        const outcomes = [0, 1, 2, 3].map((code) =>
          runStep(job, step, workflow, { FAKE_EXIT: String(code) }),
        );
        assert.deepEqual(
          outcomes.map((o) => o.code),
          [0, 1, 2, 3],
        );
        assert.ok(!outcomes[0].stdout.includes('::error::'));
        assert.match(outcomes[1].stdout, /::error::Checks failed or timed out/);
        assert.match(
          outcomes[2].stdout,
          /::error::ixapi-conformance was called wrongly or lacks its credentials/,
        );
        assert.match(outcomes[3].stdout, /::error::.*exit code 3/);
      }
    });
  });

  describe('ci.sh', () => {
    function runScript(env: Record<string, string>) {
      const tools = fakeTools();
      const work = path.join(tools.dir, 'work');
      mkdirSync(work);
      const run = spawnSync('bash', [SCRIPT_FILE], {
        cwd: work,
        encoding: 'utf8',
        env: {
          PATH: `${tools.bin}:${process.env.PATH}`,
          HOME: tools.dir,
          IXAPI_PRIMARY_KEY: 'k1',
          IXAPI_PRIMARY_SECRET: 's1',
          IXAPI_SECONDARY_KEY: 'k2',
          IXAPI_SECONDARY_SECRET: 's2',
          ...env,
        },
      });
      const result = {
        code: run.status,
        output: run.stdout + run.stderr,
        calls: tools.calls(),
        npm: tools.npm(),
        work,
      };
      rmSync(tools.dir, { recursive: true, force: true });
      return result;
    }
    const URL = 'https://ix.example/api/v2';

    it('is valid bash', () => {
      const check = spawnSync('bash', ['-n', SCRIPT_FILE], { encoding: 'utf8' });
      assert.equal(check.status, 0, check.stderr);
    });

    it('installs the tarball and runs the read profile with every report and the secrets', () => {
      const { code, calls, npm, work, output } = runScript({
        CONFORMANCE_BASE_URL: URL,
        CONFORMANCE_TARBALL: 'vendor/ixapi-conformance-0.1.0.tgz',
      });
      assert.equal(code, 0, output);
      assert.equal(npm.length, 1);
      assert.equal(npm[0][0], 'install');
      assert.equal(npm[0].at(-1), path.join(work, 'vendor/ixapi-conformance-0.1.0.tgz'));
      assert.equal(calls.length, 1);
      assert.ok(calls[0].npx.includes('--no-install'));
      assert.equal(
        calls[0].npx[calls[0].npx.indexOf('--prefix') + 1],
        npm[0][npm[0].indexOf('--prefix') + 1],
      );
      const { values, positionals } = parsed(calls[0].args);
      assert.deepEqual(positionals, []);
      assert.deepEqual(
        { ...values },
        {
          'base-url': URL,
          profile: 'read',
          junit: 'conformance-reports/junit.xml',
          html: 'conformance-reports/report.html',
          json: 'conformance-reports/report.json',
        },
      );
      assert.deepEqual(credentialsFromEnvironment(calls[0].env), {
        primary: { api_key: 'k1', api_secret: 's1' },
        secondary: { api_key: 'k2', api_secret: 's2' },
      });
      assert.match(output, /no check failed or timed out; reports in conformance-reports\//);
    });

    it('runs the full profile with a ledger and cleans up after it, and takes expected failures', () => {
      const { code, calls, npm, output } = runScript({
        CONFORMANCE_BASE_URL: URL,
        CONFORMANCE_PROFILE: 'full',
        CONFORMANCE_REPORTS: 'out',
        CONFORMANCE_EXPECTED_FAILURES: 'known.txt',
      });
      assert.equal(code, 0, output);
      assert.deepEqual(npm, [], 'nothing installed without a tarball');
      assert.deepEqual(calls[0].npx, ['--no-install']);
      const run = parsed(calls[0].args).values;
      assert.equal(run.profile, 'full');
      assert.equal(run.ledger, 'out/ledger.jsonl');
      assert.equal(run['expected-failures'], 'known.txt');
      const cleanup = parsed(calls[1].args);
      assert.deepEqual(cleanup.positionals, ['cleanup']);
      assert.deepEqual(
        { ...cleanup.values },
        { 'base-url': URL, ledger: 'out/ledger.jsonl', profile: 'read' },
      );
    });

    it('exits as the suite does, and fails a run whose cleanup left something behind', () => {
      const codes = [0, 1, 2, 3].map((code) =>
        runScript({ CONFORMANCE_BASE_URL: URL, FAKE_EXIT: String(code) }),
      );
      assert.deepEqual(
        codes.map((c) => c.code),
        [0, 1, 2, 3],
      );
      assert.match(codes[1].output, /checks failed or timed out/);
      assert.match(codes[2].output, /called wrongly or without credentials/);
      assert.match(codes[3].output, /exit code 3/);
      const leftBehind = runScript({
        CONFORMANCE_BASE_URL: URL,
        CONFORMANCE_PROFILE: 'full',
        FAKE_CLEANUP_EXIT: '1',
      });
      assert.equal(leftBehind.code, 1, leftBehind.output);
      const missing = runScript({});
      assert.equal(missing.code, 2);
      assert.match(missing.output, /CONFORMANCE_BASE_URL must name the API root/);
      assert.deepEqual(missing.calls, []);
    });
  });
});
