import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** A new random id such as `acc-7m2k9x4q1b8d3f6h`: a short resource prefix and 80 random bits. */
export function newId(prefix: string): string {
  const bytes = randomBytes(16);
  let suffix = '';
  for (let i = 0; i < 16; i += 1) suffix += ALPHABET[bytes[i] % 32];
  return `${prefix}-${suffix}`;
}
