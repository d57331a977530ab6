/**
 * Box JSON exactly as sent (snake_case). Only the fields boxsync reads; every field is optional or nullable
 * because Box omits what `fields` did not ask for and documents several as nullable. Ids may arrive as strings
 * or (in some doc examples) numbers; `decode.ts` turns these into core/model types and nothing of this file
 * leaves src/remote/box.
 */
export type WireId = string | number;

export interface WireMini {
  readonly type?: string;
  readonly id: WireId;
  readonly etag?: string | number | null;
  readonly sequence_id?: string | number | null;
  readonly name?: string;
}

export interface WireItem extends WireMini {
  readonly type: 'file' | 'folder' | 'web_link' | string;
  readonly sha1?: string | null;
  readonly size?: number | string | null;
  readonly modified_at?: string | null;
  readonly content_modified_at?: string | null;
  readonly created_at?: string | null;
  readonly parent?: WireMini | null;
  readonly file_version?: { readonly id: WireId; readonly sha1?: string | null } | null;
  readonly url?: string | null;
  readonly item_status?: 'active' | 'trashed' | 'deleted' | string | null;
  readonly path_collection?: { readonly entries?: readonly WireMini[] } | null;
  readonly sync_state?: string | null;
  readonly lock?: WireLock | null;
  readonly shared_link?: WireSharedLink | null;
}

export interface WireLock {
  readonly id?: WireId;
  readonly type?: string;
  readonly created_at?: string | null;
  readonly expired_at?: string | null;
  readonly expires_at?: string | null;
  readonly is_download_prevented?: boolean | null;
  readonly created_by?: { readonly id?: WireId; readonly login?: string } | null;
}

export interface WireSharedLink {
  readonly url?: string | null;
  readonly download_url?: string | null;
  readonly access?: string | null;
  readonly effective_access?: string | null;
  readonly is_password_enabled?: boolean | null;
  readonly unshared_at?: string | null;
}

export interface WireFiles {
  readonly total_count?: number;
  readonly entries?: readonly WireItem[];
}

export interface WireError {
  readonly type?: string;
  readonly status?: number;
  readonly code?: string;
  readonly message?: string;
  readonly request_id?: string;
  readonly context_info?: {
    readonly conflicts?: WireItem | readonly WireItem[] | null;
    readonly [k: string]: unknown;
  } | null;
  /** OAuth endpoints answer `{error, error_description}` instead. */
  readonly error?: string;
  readonly error_description?: string;
}

export interface WireToken {
  readonly access_token: string;
  readonly refresh_token?: string;
  readonly expires_in?: number;
  readonly token_type?: string;
}

export interface WirePreflight {
  readonly upload_url?: string | null;
  readonly upload_token?: string | null;
}

export interface WirePart {
  readonly part_id: string;
  readonly offset: number;
  readonly size: number;
  readonly sha1: string;
}

export interface WireRealtimeServer {
  readonly type?: string;
  readonly url: string;
  readonly ttl?: string | number;
  readonly max_retries?: string | number;
  readonly retry_timeout?: string | number;
}

