/** Ids are opaque and URL-safe: letters, digits, `-`, `_`, `:`; at most 80 characters. */
export const ID_PATTERN = /^[A-Za-z0-9:_-]{1,80}$/;
