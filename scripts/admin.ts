import { parseArgs } from 'node:util';
import pino from 'pino';
import { createCustomerCircuit } from '../drivers/cloud/lab-provider';
import { connectWorkflowStarter } from '../temporal/client';
import type { Config } from '../config/config';
import { loadConfigOrExit } from '../config/config';
import type { Database } from '../db';
import { openDatabase } from '../db';
import { apiKeysAsJson, renderApiKeys } from './api-key-list';
import { ensureLocalSecrets } from './local-secrets';
import { kindOption, renderQueue } from './operator-queue';
import { onboardingWorkflowId } from '../domain/onboarding';
import { nextCommand } from '../domain/operator-queue';

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-account   --name NAME --country CC --locality CITY --postal-code CODE --street ADDRESS
                   [--legal-name NAME] [--managing-account ID] [--external-ref REF]
                   Creates an account (state "requested"; its on-boarding workflow takes it to
                   production) and an API key for it. The secret is printed once and never stored.
  create-api-key   --account ID [--label TEXT]
                   Issues another API key for an existing account.
  revoke-api-key   --key API_KEY
                   Revokes a key and every refresh token issued through it.
  list-api-keys    --account ID [--json]
                   Lists the account's API keys, oldest first: each key (never its secret), its
                   label, when it was made, when it was last used (a login or a refresh through it,
                   recorded to the minute) and when it was revoked.
  queue            [--kind KIND] [--json]
                   Lists what waits on the exchange, oldest first: connections waiting for their
                   cross-connect (cross_connect), resources in error (retry_provisioning) or with an
                   operator (retry_testing), resources waiting for their decommission day
                   (decommission_day) and accounts waiting for their member (onboarding); each with
                   its account, since when, why, and the command that moves it on.
  lab-cloud-circuit --provider NAME --pop POP --bandwidth MBITS
                   [--region REGION] [--key KEY] [--customer ID]
                   Makes a circuit at a lab cloud provider as a customer would (e.g. at Stratus
                   Compute, whose customers make their circuits first) and prints its key, which a
                   cloud service is then ordered with. Without --key one like stratus-k3j9x0aa is
                   made up.
`;

function required(values: Record<string, string | undefined>, names: string[]): void {
  const missing = names.filter((name) => !values[name]);
  if (missing.length) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}`);
}

class UsageError extends Error {}

/** The account `--account` names; a usage error when it is missing or names no account. */
async function accountOption(db: Database, values: Record<string, string | undefined>): Promise<string> {
  required(values, ['account']);
  if (!(await db.accounts.findById(values.account!))) throw new UsageError(`no account ${values.account}`);
  return values.account!;
}

async function createAccount(db: Database, config: Config, values: Record<string, string | undefined>) {
  required(values, ['name', 'country', 'locality', 'postal-code', 'street']);
  if (!/^[A-Z]{2}$/.test(values.country!))
    throw new UsageError('--country must be an ISO 3166-1 alpha-2 code, e.g. DE');
  const { temporal, starter } = connectWorkflowStarter({
    config,
    outbox: db.outbox,
    logger: pino({ level: 'silent' }),
  });
  // The outbox hands on the start of the account's on-boarding once the account has committed;
  // this process sends it at once, as the API does.
  const sends: Array<Promise<boolean>> = [];
  const stopSending = db.outbox.sendCommittedWith((message) => sends.push(starter.deliver(message)));
  const account = await db.accounts
    .create({
      name: values.name!,
      legal_name: values['legal-name'] ?? null,
      managing_account: values['managing-account'] ?? null,
      external_ref: values['external-ref'] ?? null,
      address: {
        country: values.country!,
        locality: values.locality!,
        postal_code: values['postal-code']!,
        street_address: values.street!,
      },
    })
    .finally(stopSending);
  const credentials = await db.credentials.createApiKey(account.id, 'admin');
  const started = sends.length > 0 && (await Promise.all(sends)).every(Boolean);
  await temporal.close();
  process.stdout.write(
    [
      `account     ${account.id} (${account.name}, state ${account.state})`,
      `onboarding  ${started ? `workflow ${onboardingWorkflowId(account.id)} started` : 'queued; the API starts it once Temporal answers'}`,
      `api_key     ${credentials.apiKey}`,
      `api_secret  ${credentials.apiSecret}`,
      'The secret is shown only now; store it safely.',
      '',
    ].join('\n'),
  );
}

async function labCloudCircuit(db: Database, values: Record<string, string | undefined>) {
  required(values, ['provider', 'pop', 'bandwidth']);
  if (!/^[1-9][0-9]*$/.test(values.bandwidth!))
    throw new UsageError('--bandwidth must be a whole number of Mbit/s, e.g. 1000');
  const circuit = await createCustomerCircuit(db.sequelize, {
    provider: values.provider!,
    pop: values.pop!,
    bandwidth: Number(values.bandwidth),
    ...(values.region === undefined ? {} : { region: values.region }),
    ...(values.key === undefined ? {} : { key: values.key }),
    ...(values.customer === undefined ? {} : { customer: values.customer }),
  });
  process.stdout.write(
    [
      `key         ${circuit.key}`,
      `circuit     ${circuit.ref} at ${circuit.provider}, ${circuit.pop} (${circuit.region}), ${circuit.bandwidth} Mbit/s, ${circuit.state}`,
      '',
    ].join('\n'),
  );
}

/** The operator's queue, as text or (--json) as the items with their commands. */
async function printQueue(
  db: Database,
  config: Config,
  values: Record<string, string | undefined>,
  json: boolean,
) {
  let kind;
  try {
    kind = kindOption(values.kind);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const namespace = config.temporalNamespace;
  const items = (await db.operatorQueue.waiting()).filter((item) => !kind || item.kind === kind);
  process.stdout.write(
    json
      ? `${JSON.stringify(
          items.map((item) => ({ ...item, command: nextCommand(item, namespace) })),
          null,
          2,
        )}\n`
      : renderQueue(items, { namespace, kind, now: new Date() }),
  );
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  // The one switch: --json, for the queue and the list of API keys.
  const json = rest.includes('--json');
  const { values } = parseArgs({
    args: rest.filter((arg) => arg !== '--json'),
    options: Object.fromEntries(
      [
        'name',
        'legal-name',
        'country',
        'locality',
        'postal-code',
        'street',
        'managing-account',
        'external-ref',
        'account',
        'label',
        'key',
        'provider',
        'pop',
        'region',
        'bandwidth',
        'customer',
        'kind',
      ].map((name) => [name, { type: 'string' as const }]),
    ),
  });
  if (process.env.NODE_ENV !== 'production') ensureLocalSecrets(process.env);
  const config = loadConfigOrExit();
  const db = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
  try {
    switch (command) {
      case 'create-account':
        await createAccount(db, config, values);
        break;
      case 'create-api-key': {
        const account = await accountOption(db, values);
        const issued = await db.credentials.createApiKey(account, values.label ?? '');
        process.stdout.write(
          `api_key     ${issued.apiKey}\napi_secret  ${issued.apiSecret}\nThe secret is shown only now.\n`,
        );
        break;
      }
      case 'revoke-api-key':
        required(values, ['key']);
        await db.credentials.revokeApiKey(values.key!);
        process.stdout.write(`revoked ${values.key}\n`);
        break;
      case 'list-api-keys': {
        const account = await accountOption(db, values);
        const keys = await db.credentials.listApiKeys(account);
        process.stdout.write(json ? apiKeysAsJson(keys) : renderApiKeys(account, keys));
        break;
      }
      case 'lab-cloud-circuit':
        await labCloudCircuit(db, values);
        break;
      case 'queue':
        await printQueue(db, config, values, json);
        break;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  if (
    error instanceof UsageError ||
    (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
  ) {
    process.stderr.write(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  process.stderr.write(`admin: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
