/**
 * The Box API base URL: what `init --api-url` accepts, and what a wrong one looks like. Box's is
 * https://api.box.com/2.0; box-server prints its base URL (http://127.0.0.1:PORT) and serves the API under
 * /2.0. A URL with no path gets /2.0 added. A 404 on GET /users/me cannot mean a missing item (the user
 * asking always exists): it means the URL does not point at the Box API, and is said so.
 */
import { SyncError } from '../../core/errors.js';
import { safeText } from '../../core/escape.js';

/** The API base for `raw`: /2.0 added when the path is empty, a trailing slash dropped. Throws on a non-URL. */
export function normalizeApiUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new Error(`"${safeText(raw)}" is not a URL (the Box API is https://api.box.com/2.0; box-server prints its own)`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(`"${safeText(raw)}" is not an http(s) URL`);
  if (u.search !== '' || u.hash !== '') throw new Error(`"${safeText(raw)}" has a query or fragment; give the API base URL only`);
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.origin}${path === '' ? '/2.0' : path}`;
}

/** The error for a 404 on GET /users/me (`cause`): the API URL is wrong. Fatal: retrying cannot help. */
export function wrongApiUrl(apiUrl: string, cause: SyncError): SyncError {
  // Box's own words, as the classifier put them (already escaped and cut there).
  const said = /\(Box: (.*)\); /.exec(cause.message)?.[1];
  return new SyncError({
    code: 'api_url_wrong',
    disposition: 'fatal',
    message:
      `${safeText(apiUrl)} is not a Box API base URL: GET ${safeText(apiUrl)}/users/me answered 404${said ? ` (${said})` : ''}. ` +
      'Check the API URL (config remote.apiUrl, or `boxsync init --api-url`): Box\'s is https://api.box.com/2.0, box-server\'s is the URL it prints',
    details: { ...cause.details, apiUrl },
    cause,
  });
}
