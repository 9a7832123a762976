import { createHash } from 'node:crypto';
import { rectifyConfusion } from 'unicode-confusables';

/**
 * Names of discoverable accounts must tell them apart: members find each other by name to order
 * circuits and admit members, so a second "Thames Cloud", or a "Demо-IX" written with a Cyrillic
 * "о", would pass for the account it imitates. Two names are alike when they read the same once
 * compatibility forms are unified (NFKC: full-width letters, ligatures), invisible characters are
 * dropped, runs of spaces count as one, and each character is replaced by the prototype Unicode's
 * confusables table (UTS #39) gives it ("rn" for "m", "l" for "I" and "1"), with case kept or
 * ignored: "Thames CIoud" is alike with case kept (a capital I passes for an l), "THAMES CLOUD"
 * with case ignored.
 */

/** Characters that show nothing (Unicode's default-ignorable ones: format characters, fillers). */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

const fold = (text: string): string =>
  text.normalize('NFKC').replace(INVISIBLE, '').replace(/\s+/gu, ' ').trim();

/** UTS #39's skeleton of the folded name, folded again: the form alike names share. */
const skeleton = (text: string): string => fold(rectifyConfusion(fold(text)));

/** The forms two alike names share in one of: with case kept, and with case ignored. */
export function nameSkeletons(name: string): { cased: string; caseless: string } {
  // Case is ignored before and after the table, which maps some characters to capitals (0 to O).
  const lower = (text: string) => text.toUpperCase().toLowerCase();
  return { cased: skeleton(name), caseless: skeleton(lower(skeleton(lower(fold(name))))) };
}

/** Keys of fixed length for the forms (digests), each held by one discoverable account at most. */
export interface NameKeys {
  cased: string;
  caseless: string;
}

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The keys a discoverable account's name holds; none for an account nobody else sees. */
export function discoverableNameKeys(name: string, discoverable: boolean): NameKeys | null {
  if (!discoverable) return null;
  const forms = nameSkeletons(name);
  return { cased: digest(forms.cased), caseless: digest(forms.caseless) };
}

/** Why a name was refused: it reads like another discoverable account's, which is not named. */
export const LOOK_ALIKE_NAME =
  'reads like the name of another discoverable account (ignoring case, spacing, look-alike and invisible characters); choose a name members can tell apart';
