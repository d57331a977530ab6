/**
 * A Box API error, thrown anywhere in a handler and turned into Box's ClientError body
 * (`type, status, code, message, context_info, help_url, request_id`) by the router. `headers` carries extras
 * such as Retry-After or WWW-Authenticate.
 */
export class BoxError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly contextInfo: Record<string, unknown> | null = null,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'BoxError';
  }
}

export function notFound(what = 'Not Found'): BoxError {
  return new BoxError(404, 'not_found', what);
}

/** The OAuth endpoints use a different body; the router writes `{error, error_description}` for these. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}
