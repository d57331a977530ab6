/**
 * Making untrusted text (names and messages from Box, names from disk) safe to print. PURE.
 *
 * `escapeText` turns every character that a terminal or a log viewer could act on into a visible escape:
 * C0 and C1 control characters (ESC, BEL, CR, NUL, ...), DEL, and the Unicode bidi and line/paragraph
 * separators, so that a name like `ESC[2J` prints as `\x1b[2J` instead of clearing the screen. Printable text,
 * including non-ASCII letters, passes unchanged, so ordinary names stay readable.
 *
 * `redactSecrets` replaces anything that looks like a credential (a bearer token, an access or refresh token in
 * a query string or JSON, a long opaque token-shaped run) with `[REDACTED]`. Box error messages can echo the
 * request's headers; nothing from them may put a token on a terminal or in a log.
 *
 * `safeText` does both, and is what every message from Box goes through before it is shown.
 */

const BIDI_AND_SEPARATORS = new Set([0x2028, 0x2029, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);

function hex(code: number): string {
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/** Any character escapeText changes: a backslash, C0, DEL, C1, the bidi controls and line separators above. */
const NEEDS_ESCAPE = /[\\\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Escape control characters (C0, DEL, C1), bidi overrides and line separators; backslashes are doubled so the escape is unambiguous. */
export function escapeText(text: string): string {
  // Most text needs no escape: returned as it is, without building a copy a character at a time.
  if (!NEEDS_ESCAPE.test(text)) return text;
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0) || BIDI_AND_SEPARATORS.has(code)) out += hex(code);
    else out += ch;
  }
  return out;
}

const SECRET_PATTERNS: readonly RegExp[] = [
  // Authorization: Bearer xxx (header echoes, in any case)
  /(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  // access_token=..., refresh_token: "...", "client_secret":"..." (query strings, JSON, form bodies)
  /((?:access|refresh|developer|id)[_-]?token|client[_-]?secret|shared[_-]?link[_-]?password|password)("?\s*[:=]\s*"?)[^\s"&,;}]+/gi,
];

/** Replace credential-shaped substrings with [REDACTED]. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const re of SECRET_PATTERNS) out = out.replace(re, (_m, a: string, b?: string) => `${a}${typeof b === 'string' ? b : ''}[REDACTED]`);
  return out;
}

/** Escape and redact: the form in which any text from Box reaches a terminal or a log. Long text is cut. */
export function safeText(text: unknown, maxChars = 1000): string {
  const s = typeof text === 'string' ? text : String(text);
  const cut = s.length > maxChars ? `${s.slice(0, maxChars)}…` : s;
  return escapeText(redactSecrets(cut));
}

const JSON_UNSAFE = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text with the characters JSON.stringify leaves raw but a terminal may act on (DEL, C1 controls, bidi and
 * line separators) written as `\uXXXX` escapes: the same JSON value, safe to print. (JSON.stringify already
 * escapes C0 controls such as ESC and the newline.)
 */
export function terminalSafeJson(json: string): string {
  return json.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** An error (or anything thrown) as one escaped, redacted line of text, for `boxsync: <message>` lines. */
export function errorText(e: unknown): string {
  return safeText(e instanceof Error ? e.message : String(e), 4000);
}
