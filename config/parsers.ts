/** Parsers of configuration values: each takes a variable's text and names the variable when it is wrong. */

import { ConfigError } from './config-error';

/** So many requests per window of so many seconds. */
export interface RateLimit {
  points: number;
  durationSeconds: number;
}

/** The device drivers a worker can run (worker/create-worker.ts builds them). */
export const DEVICE_DRIVER_NAMES = ['lab', 'ovs'] as const;
export type DeviceDriverName = (typeof DEVICE_DRIVER_NAMES)[number];

export function parseDeviceDriver(raw: string): DeviceDriverName {
  const name = raw.trim();
  const known = DEVICE_DRIVER_NAMES.find((candidate) => candidate === name);
  if (!known)
    throw new ConfigError('DEVICE_DRIVER', `must be one of ${DEVICE_DRIVER_NAMES.join(', ')}, got "${raw}"`);
  return known;
}
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

export function parseDuration(variable: string, raw: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(raw.trim());
  if (!match)
    throw new ConfigError(variable, `expected a duration such as 3600, 90m, 1h or 30d, got "${raw}"`);
  const seconds = Number(match[1]) * DURATION_UNITS[match[2] || 's'];
  if (seconds < 1) throw new ConfigError(variable, 'must be at least one second');
  return seconds;
}

/** `30/1m` (30 requests a minute), `1200/3600`; `0` turns the limit off. */
export function parseRateLimit(variable: string, raw: string): RateLimit | null {
  if (raw.trim() === '0') return null;
  const match = /^(\d+)\s*\/\s*(\S+)$/.exec(raw.trim());
  if (!match) throw new ConfigError(variable, `expected requests/window such as 30/1m, or 0, got "${raw}"`);
  const points = Number(match[1]);
  if (points < 1 || points > 1_000_000)
    throw new ConfigError(variable, 'requests must be between 1 and 1000000');
  return { points, durationSeconds: parseDuration(variable, match[2]) };
}

/** One key or more, separated by commas or line breaks, each as parseKey takes it. */
export function parseKeyList(variable: string, raw: string | undefined): Uint8Array[] {
  const parts = (raw ?? '').split(/[,\n]/).filter((part) => part.trim() !== '');
  if (!parts.length) return [parseKey(variable, raw)];
  return parts.map((part) => parseKey(variable, part));
}

export function parseInteger(variable: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(variable, `expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(variable, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Accepts a key as hex (64+ hex digits) or base64/base64url; rejects anything shorter than 32 bytes. */
export function parseKey(variable: string, raw: string | undefined): Uint8Array {
  if (raw === undefined || raw.trim() === '') {
    throw new ConfigError(variable, 'is required (at least 32 random bytes, base64 or hex encoded)');
  }
  const text = raw.trim();
  let bytes: Buffer;
  if (/^[0-9a-fA-F]+$/.test(text) && text.length % 2 === 0) bytes = Buffer.from(text, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) bytes = Buffer.from(text, 'base64');
  else throw new ConfigError(variable, 'must be hex or base64 encoded');
  if (bytes.length < 32) throw new ConfigError(variable, `must hold at least 32 bytes, got ${bytes.length}`);
  return new Uint8Array(bytes);
}

export function parseDatabaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The URL carries the database password: never repeat it.
    throw new ConfigError('DATABASE_URL', 'is not a URL');
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') {
    throw new ConfigError('DATABASE_URL', `must start with mysql:// or mariadb://, got "${url.protocol}//"`);
  }
  if (url.pathname.replace(/^\//, '') === '') throw new ConfigError('DATABASE_URL', 'must name a database');
  return raw;
}

export function parseTemporalAddress(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(raw.trim())) {
    throw new ConfigError('TEMPORAL_ADDRESS', `expected host:port, got "${raw}"`);
  }
  return raw.trim();
}

/** A port of its own for an optional listener; unset or empty turns it off. */
export function parseOptionalPort(variable: string, raw: string): number | null {
  if (raw.trim() === '') return null;
  return parseInteger(variable, raw, 1, 65535);
}

/** The largest id the IX-F member export takes: the schema's integers, as 32-bit databases keep them. */
const IXF_ID_MAX = 2_147_483_647;

/** `ns-exchange-lan-fra=1, ns-exchange-lan-ams=2`: a number per exchange LAN id, each LAN once. */
export function parseIdsByLan(variable: string, raw: string): Record<string, number> {
  const ids: Record<string, number> = {};
  for (const pair of raw.split(/[,\s]+/).filter((part) => part !== '')) {
    const match = /^([A-Za-z0-9:_-]{1,80})=(\d{1,10})$/.exec(pair);
    if (!match)
      throw new ConfigError(
        variable,
        `expected exchange-LAN-id=number pairs separated by commas, got "${pair}"`,
      );
    const [, lan, number] = match;
    if (Object.hasOwn(ids, lan)) throw new ConfigError(variable, `names ${lan} twice`);
    ids[lan] = parseInteger(variable, number, 0, IXF_ID_MAX);
  }
  return ids;
}

export function parseName(variable: string, raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/.test(raw)) {
    throw new ConfigError(variable, `must be letters, digits, ".", "_" or "-", got "${raw}"`);
  }
  return raw;
}
