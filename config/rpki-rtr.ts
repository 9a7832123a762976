/** RPKI_RTR: the validator caches the route servers fetch validated ROA payloads from. */

import { isIP } from 'node:net';
import { ConfigError } from './config-error';

/** An RPKI-to-Router cache (RFC 8210): a validator the route servers' BIRDs connect to. */
export interface RtrCache {
  /** An IPv4 or IPv6 address, or a DNS name. */
  host: string;
  port: number;
}

const DNS_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * `host:port` entries, comma separated, an IPv6 address in brackets (`[2001:db8::1]:3323`); empty
 * for none. Each cache once.
 */
export function parseRtrCaches(variable: string, raw: string): RtrCache[] {
  const caches: RtrCache[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (!entry) continue;
    const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry);
    const host = match ? (match[1] ?? match[2]) : '';
    const port = match ? Number(match[3]) : 0;
    if (
      !match ||
      (match[1] !== undefined
        ? isIP(host) !== 6
        : isIP(host) !== 4 && (!DNS_NAME.test(host) || /^[\d.]+$/.test(host)))
    )
      throw new ConfigError(
        variable,
        `expected host:port entries such as 192.0.2.5:3323 or [2001:db8::5]:3323, comma separated, got "${entry}"`,
      );
    if (port < 1 || port > 65535)
      throw new ConfigError(variable, `port ${port} of "${entry}" is not 1 to 65535`);
    if (caches.some((cache) => cache.host.toLowerCase() === host.toLowerCase() && cache.port === port))
      throw new ConfigError(variable, `names ${entry} twice`);
    caches.push({ host, port });
  }
  return caches;
}
