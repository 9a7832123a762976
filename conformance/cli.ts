#!/usr/bin/env node
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';
import type { Credentials, RetryPolicy, Waits } from './index';
import { cleanUpLedger, passed, runConformance } from './index';
import { parseExpectedFailures } from './model';
import { formatProgress, formatSummary } from './reports/console';
import { toHtml } from './reports/html';
import { toJson } from './reports/json';
import { toJUnitXml } from './reports/junit';

const USAGE = `ixapi-conformance: checks an IX-API 2.6 server against the specification

  ixapi-conformance --base-url URL --credentials FILE [options]
  ixapi-conformance cleanup --base-url URL --credentials FILE [--ledger FILE]
  (in the server's repository: npm run conformance -- …)
  (without --credentials: IXAPI_PRIMARY_KEY and IXAPI_PRIMARY_SECRET, and likewise IXAPI_SECONDARY_…
  and IXAPI_SUBACCOUNT_…, from the environment, as CI secrets are given)

  --base-url URL       the API root, e.g. https://ixapi.example.net/api/v2
  --credentials FILE   JSON: {"primary": {"api_key", "api_secret"}, "secondary": {...}, "subaccount": {...}}
                       (secondary: an unrelated account, for isolation and redaction checks),
                       or the demo credentials \`npm start\` writes, with the accounts chosen by
  --primary ACCOUNT    … --secondary ACCOUNT, --subaccount ACCOUNT: an account id or name
  --profile read|full  read (default) only reads and is safe against production;
                       full also creates its own resources and removes them again
  --ledger FILE        where full writes down what it creates, and cleanup reads it (default: one
                       file per exchange in $XDG_STATE_HOME/ixapi-conformance, else
                       ~/.local/state/ixapi-conformance)
  --junit FILE         JUnit XML report
  --json FILE          JSON report
  --html FILE          single-file HTML report
  --only IDS           comma-separated check ids or prefixes (PAG-, AUTH-001)
  --skip IDS           comma-separated check ids or prefixes to leave out
  --expected-failures FILE
                       check ids (one a line, # comments) known to fail: they do not fail the run,
                       but one that stops failing does
  --max-retries N      how often a request answered 429 is sent again after waiting (default 3; 0 never)
  --max-retry-wait S   the longest wait for one retry in seconds (default 60): a 429 whose Retry-After
                       asks for more ends the retries, and the check that sent it is INCONCLUSIVE
  --provisioning-wait S
                       how long full waits for an order to reach production, in seconds (default 20);
                       the deadlines of checks grow with it
  --settling-wait S    how long full waits for a change or cancellation to show, in seconds (default 10)

Exit code: 0 when no check failed or timed out, 1 otherwise, 2 for a usage error.`;

class UsageError extends Error {}

/**
 * Where a full run writes down what it creates unless told: a state folder of the user's (the XDG
 * base directories), one file per exchange (its host and port), so that a later `cleanup` of the
 * same exchange finds it and runs against other exchanges keep apart.
 */
export function defaultLedgerFile(baseUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME?.trim() || path.join(homedir(), '.local', 'state');
  const exchange = new URL(baseUrl).host.replace(/[^A-Za-z0-9.-]/g, '_');
  return path.join(state, 'ixapi-conformance', `ledger-${exchange}.jsonl`);
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read ${what} from ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The accounts a demo-credentials file (`npm start` writes one) holds. */
interface DemoAccount {
  role?: string;
  name?: string;
  accountId?: string;
  apiKey?: string;
  apiSecret?: string;
}

/** Which demo account plays which role: `--primary`, `--secondary`, `--subaccount` (id or name). */
export type RoleChoice = Partial<Record<keyof Credentials, string>>;

/**
 * The credentials of a demo-credentials file (`{"baseUrl", "accounts": [{"accountId", "name",
 * "apiKey", "apiSecret", …}]}`): each role the flags name gets the account of that id or name.
 */
export function credentialsOfDemo(file: string, accounts: DemoAccount[], choice: RoleChoice): Credentials {
  if (!choice.primary)
    throw new UsageError(
      `${file} lists accounts: name the primary one with --primary (one of ${accounts.map((a) => a.accountId).join(', ')})`,
    );
  const found: Partial<Credentials> = {};
  for (const [role, wanted] of Object.entries(choice) as Array<[keyof Credentials, string | undefined]>) {
    if (!wanted) continue;
    const account = accounts.find(
      (a) => a.accountId === wanted || a.name?.toLowerCase() === wanted.toLowerCase(),
    );
    if (!account)
      throw new UsageError(
        `${file} has no account ${wanted} for --${role} (it has ${accounts.map((a) => a.accountId).join(', ')})`,
      );
    if (typeof account.apiKey !== 'string' || typeof account.apiSecret !== 'string')
      throw new UsageError(`${file}: account ${wanted} has no apiKey and apiSecret`);
    found[role] = { api_key: account.apiKey, api_secret: account.apiSecret };
  }
  return found as Credentials;
}

function readCredentials(file: string, choice: RoleChoice = {}): Credentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readText(file, 'credentials'));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `cannot read credentials from ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const demo = parsed as { accounts?: unknown };
  if (Array.isArray(demo.accounts)) return credentialsOfDemo(file, demo.accounts as DemoAccount[], choice);
  if (Object.values(choice).some(Boolean))
    throw new UsageError(
      '--primary, --secondary and --subaccount choose accounts of a demo-credentials file',
    );
  const credentials = parsed as Partial<Credentials>;
  const valid = (c: unknown) =>
    typeof c === 'object' &&
    c !== null &&
    typeof (c as { api_key?: unknown }).api_key === 'string' &&
    typeof (c as { api_secret?: unknown }).api_secret === 'string';
  if (!valid(credentials.primary)) throw new UsageError(`${file}: "primary" needs api_key and api_secret`);
  for (const role of ['secondary', 'subaccount'] as const) {
    if (credentials[role] !== undefined && !valid(credentials[role])) {
      throw new UsageError(`${file}: "${role}" needs api_key and api_secret`);
    }
  }
  return credentials as Credentials;
}

const ROLE_VARIABLES = { primary: 'PRIMARY', secondary: 'SECONDARY', subaccount: 'SUBACCOUNT' } as const;

/**
 * The credentials from the environment, as CI systems hand secrets over: IXAPI_<ROLE>_KEY and
 * IXAPI_<ROLE>_SECRET for the primary account (required), the secondary and the sub-account. A
 * key without its secret, or the reverse, is refused by name; no message shows a value.
 */
export function credentialsFromEnvironment(env: NodeJS.ProcessEnv): Credentials {
  const found: Partial<Credentials> = {};
  for (const [role, name] of Object.entries(ROLE_VARIABLES) as Array<[keyof Credentials, string]>) {
    const key = env[`IXAPI_${name}_KEY`]?.trim();
    const secret = env[`IXAPI_${name}_SECRET`]?.trim();
    if (!key && !secret) continue;
    if (!key || !secret)
      throw new UsageError(
        `IXAPI_${name}_${key ? 'SECRET' : 'KEY'} is missing: IXAPI_${name}_KEY and IXAPI_${name}_SECRET go together`,
      );
    found[role] = { api_key: key, api_secret: secret };
  }
  if (!found.primary)
    throw new UsageError('--credentials FILE, or IXAPI_PRIMARY_KEY and IXAPI_PRIMARY_SECRET, are required');
  return found as Credentials;
}

const list = (value: string | undefined) =>
  value
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/** The command line's options (as node:util's parseArgs takes them); USAGE describes each. */
export const OPTIONS = {
  'base-url': { type: 'string' },
  credentials: { type: 'string' },
  profile: { type: 'string', default: 'read' },
  ledger: { type: 'string' },
  junit: { type: 'string' },
  json: { type: 'string' },
  html: { type: 'string' },
  only: { type: 'string' },
  skip: { type: 'string' },
  'expected-failures': { type: 'string' },
  'max-retries': { type: 'string' },
  'max-retry-wait': { type: 'string' },
  'provisioning-wait': { type: 'string' },
  'settling-wait': { type: 'string' },
  primary: { type: 'string' },
  secondary: { type: 'string' },
  subaccount: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} satisfies ParseArgsConfig['options'];

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    // Unknown options, missing values and the like: parseArgs says which.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A whole number of at least 0 given for `option`, or undefined when it was not given. */
function count(value: string | undefined, option: string, unit = ''): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()))
    throw new UsageError(`${option} takes a whole number${unit}, got ${value}`);
  return Number(value);
}

/** The retry policy the options ask for (only what they set). */
function retryOf(values: { 'max-retries'?: string; 'max-retry-wait'?: string }): Partial<RetryPolicy> {
  const maxRetries = count(values['max-retries'], '--max-retries');
  const maxWait = count(values['max-retry-wait'], '--max-retry-wait', ' of seconds');
  return {
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(maxWait === undefined ? {} : { maxWaitMs: maxWait * 1000 }),
  };
}

/** The waits the options ask for (only what they set), each from 1 s to an hour. */
export function waitsOf(values: { 'provisioning-wait'?: string; 'settling-wait'?: string }): Partial<Waits> {
  const seconds = (option: 'provisioning-wait' | 'settling-wait') => {
    const value = count(values[option], `--${option}`, ' of seconds');
    if (value !== undefined && (value < 1 || value > 3600))
      throw new UsageError(`--${option} takes 1 to 3600 seconds, got ${value}`);
    return value;
  };
  const provisioning = seconds('provisioning-wait');
  const settling = seconds('settling-wait');
  return {
    ...(provisioning === undefined ? {} : { provisioning: provisioning * 1000 }),
    ...(settling === undefined ? {} : { settling: settling * 1000 }),
  };
}

function ledgerFolderMade(file: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  return file;
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv);
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values['base-url']) throw new UsageError('--base-url is required');
  const baseUrl = values['base-url'].replace(/\/$/, '');
  if (!/^https?:\/\//.test(baseUrl))
    throw new UsageError(`--base-url must be an http(s) URL, got ${baseUrl}`);
  const credentials = values.credentials
    ? readCredentials(values.credentials, {
        primary: values.primary,
        secondary: values.secondary,
        subaccount: values.subaccount,
      })
    : credentialsFromEnvironment(process.env);
  const ledgerFile = values.ledger ?? defaultLedgerFile(baseUrl);
  const retry = retryOf(values);
  const waits = waitsOf(values);

  if (positionals[0] === 'cleanup') {
    const left = await cleanUpLedger({ baseUrl, credentials, ledgerFile, retry });
    process.stdout.write(
      left ? `${left} resource(s) could not be removed; see ${ledgerFile}\n` : 'nothing left behind\n',
    );
    return left ? 1 : 0;
  }
  if (positionals.length) throw new UsageError(`unknown command ${positionals[0]}`);
  if (values.profile !== 'read' && values.profile !== 'full')
    throw new UsageError('--profile is read or full');

  const expectedFailures = values['expected-failures']
    ? parseExpectedFailures(readText(values['expected-failures'], 'expected failures'))
    : undefined;
  const colour = process.stdout.isTTY === true;
  const summary = await runConformance({
    baseUrl,
    credentials,
    profile: values.profile,
    only: list(values.only),
    skip: list(values.skip),
    expectedFailures,
    retry,
    waits,
    ledgerFile: values.profile === 'full' ? ledgerFolderMade(ledgerFile) : undefined,
    onResult: (result, index, total) =>
      process.stdout.write(`${formatProgress(result, index, total, { colour })}\n`),
  });
  process.stdout.write(`\n${formatSummary(summary, { colour })}\n`);
  if (values.junit) writeFileSync(values.junit, toJUnitXml(summary));
  if (values.json) writeFileSync(values.json, toJson(summary));
  if (values.html) writeFileSync(values.html, toHtml(summary));
  return passed(summary) ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `${error instanceof UsageError ? `${error.message}\n\n${USAGE}` : String(error)}\n`,
      );
      process.exitCode = 2;
    },
  );
}
