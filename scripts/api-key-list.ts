import type { ListedApiKey } from '../db/repositories/credential-repository';

/** A moment as the list shows it: UTC to the second, or what stands for none. */
const shown = (moment: Date | null, none: string) =>
  moment ? moment.toISOString().slice(0, 19).replace('T', ' ') : none;

/** The keys as `list-api-keys --json` prints them: their public part and dates, never a secret. */
export function apiKeysAsJson(keys: readonly ListedApiKey[]): string {
  const listed = keys.map((key) => ({
    api_key: key.apiKey,
    label: key.label,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  }));
  return `${JSON.stringify(listed, null, 2)}\n`;
}

/**
 * The keys of an account as a table, one a row, oldest first: the key (its public part), its label,
 * when it was made, last used (a login or refresh through it, to the minute) and revoked.
 */
export function renderApiKeys(accountId: string, keys: readonly ListedApiKey[]): string {
  if (!keys.length) return `Account ${accountId} has no API keys.\n`;
  const rows = [
    ['api_key', 'label', 'created_at', 'last_used_at', 'revoked_at'],
    ...keys.map((key) => [
      key.apiKey,
      key.label || '-',
      shown(key.createdAt, '-'),
      shown(key.lastUsedAt, 'never'),
      shown(key.revokedAt, '-'),
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const active = keys.filter((key) => !key.revokedAt).length;
  return [
    `Account ${accountId}: ${keys.length} API key${keys.length === 1 ? '' : 's'}, ${active} active (times in UTC)`,
    ...rows.map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    ),
    '',
  ].join('\n');
}
