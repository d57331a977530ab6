/**
 * Box's item name rules (openapi: POST/PUT folders, copies): 1..255 characters; no non-printable ASCII, `/` or
 * `\`; no trailing spaces; not `.` or `..`. Create and rename reject a bad name (400 item_name_invalid /
 * item_name_too_long); copy strips the bad characters instead.
 */
import { BoxError } from './box-error.js';

const forbidden = /[\u0000-\u001f\u007f/\\]/;
const maxNameLength = 255;
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function validateName(name: unknown): string {
  if (typeof name !== 'string') throw new BoxError(400, 'bad_request', "'name' must be a string");
  if ([...name].length > maxNameLength) {
    throw new BoxError(400, 'item_name_too_long', `Item name is longer than ${maxNameLength} characters; nothing was changed`);
  }
  if (name.length === 0 || name === '.' || name === '..' || forbidden.test(name) || name.endsWith(' ') || loneSurrogate.test(name)) {
    throw new BoxError(400, 'item_name_invalid', 'Item name invalid: names may not be empty, "." or "..", contain / \\ or control characters, or end with a space; nothing was changed');
  }
  return name;
}

export function stripName(name: string): string {
  const cleaned = name.replace(/[\u0000-\u001f\u007f/\\]/g, '').replace(/ +$/, '');
  return validateName(cleaned);
}

/** The key under which names are unique in a folder: case-insensitive, across files, folders and links. */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}
