/**
 * What simple uploads (upload.ts) and upload sessions (upload-session.ts) share: their dependencies, the target,
 * reading the uploaded item from an answer, and the error for a file that changed while it uploaded. Its own file
 * so that upload.ts (which hands big files to upload-session.ts) and upload-session.ts do not import each other.
 */
import { SyncError } from '../../core/errors.js';
import { escapeText } from '../../core/escape.js';
import type { RemoteEntry, RemoteId } from '../../core/model.js';
import type { Logger } from '../../logger.js';
import type { UploadRequest, UploadSessionStore } from '../../ports/remote-store.js';
import type { Bandwidth } from './bandwidth.js';
import { decodeItem } from './decode.js';
import { remoteError } from './error-codes.js';
import type { BoxHttp } from './http.js';
import type { WireFiles } from './wire-types.js';

export interface UploadDeps {
  readonly http: BoxHttp;
  readonly apiUrl: string;
  readonly uploadUrl: string;
  readonly logger: Logger;
  readonly sessionThresholdBytes: number;
  /** Files of at least this size are preflighted (default PREFLIGHT_MIN_BYTES). */
  readonly preflightMinBytes?: number;
  readonly partConcurrency: number;
  readonly sessions: UploadSessionStore | undefined;
  /** The transfer bandwidth cap shared with downloads (`--bwlimit`); none: as fast as the link goes. */
  readonly bandwidth?: Bandwidth | undefined;
}

export type UploadTarget =
  | { readonly kind: 'new'; readonly parentId: RemoteId }
  | { readonly kind: 'version'; readonly id: RemoteId; readonly ifMatch: string | undefined };

export function changedWhileUploading(req: UploadRequest, how: string): SyncError {
  return new SyncError({ code: 'local_changed', disposition: 'replan', message: `${escapeText(req.name)} changed while it was being uploaded (${how}); will look at it again` });
}

export function firstEntry(body: WireFiles | undefined, what: string): RemoteEntry {
  const w = body?.entries?.[0];
  if (!w) throw remoteError('server_error', `${new URL(what).pathname}: Box answered without the uploaded file`);
  return decodeItem(w);
}
