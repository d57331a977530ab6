/**
 * The programmatic contract of box-server (re-exported by index.ts). Other engineers' tests code against these
 * names: extend, never rename.
 */
export interface BoxServerOptions {
  /** Interface to listen on; default '127.0.0.1'. */
  host?: string;
  /** Port; default 0 (any free port). */
  port?: number;
  /** Persist metadata (state.json, replaced atomically) and blobs here; default in memory (blobs in a private temp dir). */
  dataDir?: string;
  /** Developer tokens for the default user (id '1'). */
  tokens?: string[];
  /** Lifetime of OAuth access tokens in seconds (default 3600). */
  accessTokenTtlSec?: number;
  /** Seed sample content (a few folders, text files, one web link) for the demo. */
  sample?: boolean;
  /** How long the realtime URL waits before answering reconnect (default 60000). */
  longPollTimeoutMs?: number;
  /** part_size of upload sessions (default 8388608); the minimum session file size stays 20000000. */
  chunkedPartSizeBytes?: number;
  /** Extension: how long an upload-session commit waits for the whole-file SHA-1 before answering 202 + Retry-After (default 5000). */
  sessionCommitWaitMs?: number;
  /** Log one line per request to stderr (never the Authorization header). */
  logRequests?: boolean;
  /**
   * Serve HTTPS instead of HTTP, as Box does (every URL it hands out, download and long-poll URLs included,
   * then starts with https://). PEM key and certificate; the client must trust the certificate.
   */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /**
   * Extension: the bases of the URLs handed out, per kind of host, instead of the server's own address (`--as-box`
   * hands out Box's host names, e.g. `{ upload: 'https://upload.box.com', download: 'https://dl.boxcloud.com' }`).
   */
  publicUrls?: Partial<Record<PublicHost, string>>;
  /**
   * Enforce Box's published per-user rate limits (true: 1,000 API calls and 240 uploads a minute), answered with
   * 429 and Retry-After as Box does. Off by default.
   */
  boxLimits?: boolean | { apiCallsPerMinute?: number; uploadsPerMinute?: number };
}

/** The kinds of host whose URLs box-server hands out: preflight and upload sessions, downloads, long polling, API. */
export type PublicHost = 'upload' | 'download' | 'realtime' | 'api';

export interface BoxServer {
  readonly baseUrl: string;
  readonly apiUrl: string;
  readonly uploadUrl: string;
  readonly tokenUrl: string;
  readonly authorizeUrl: string;
  readonly control: BoxServerControl;
  close(): Promise<void>;
}

export interface FaultRule {
  /** e.g. 'PUT'; default any. */
  method?: string;
  /** Matched against the URL pathname: exact, a prefix ending in '*', or a RegExp. */
  path: string | RegExp;
  /** How many matching requests (default 1). */
  count?: number;
  /** Respond with this status and a Box error body... */
  status?: number;
  /** ...with this code (default derived from the status). */
  code?: string;
  /** Adds Retry-After. */
  retryAfterSec?: number;
  /** Delay before handling (with or without status). */
  delayMs?: number;
  /** Destroy the socket before sending anything, or halfway through the response body (downloads) / after reading half the request body (uploads). */
  reset?: 'before-response' | 'mid-body';
  /**
   * Answer with this JSON value instead of running the route (status: `status` or 200). For misbehaving-server
   * tests: a malformed page, a hostile name, a loop. Use `rawBody` for text JSON.stringify cannot make
   * (numbers beyond 2^53, invalid JSON).
   */
  body?: unknown;
  /** Answer with this exact text (Content-Type application/json) instead of running the route. */
  rawBody?: string;
  /**
   * Run the route, then pass its JSON answer through this function before it is sent (programmatic control
   * only: a function cannot cross the HTTP control surface). Lets a test corrupt one field of a real answer.
   */
  transform?: (body: unknown, req: { readonly path: string; readonly query: URLSearchParams }) => unknown;
  /**
   * Answer with the JSON this function returns for the request (status: `status` or 200) instead of running the
   * route (programmatic control only). Lets a test make up answers for items that do not exist: a tree with no
   * bottom, a paging marker that changes on every page.
   */
  respond?: (req: { readonly path: string; readonly query: URLSearchParams }) => unknown;
  /**
   * Run this (programmatic only) when a matching request arrives, before any delay, before the request is handled
   * and before any of its body is read, then handle the request as usual (or as the rule's other fields say). The
   * client waits meanwhile, its body held in the socket buffers: a test changes the world at a known point of a
   * request (truncates a file mid-upload), or acts at the moment a request reached the server (kills its client).
   */
  hook?: (req: { readonly method: string; readonly path: string }) => void | Promise<void>;
  /** Extra response headers (with `status`, `body`, `rawBody` or `transform`), e.g. `{ 'Retry-After': '86400' }`. */
  headers?: Record<string, string>;
  /** Accept the request and never answer (until the client gives up or the server closes). */
  hang?: boolean;
  /**
   * Answer 200 with a generated body instead of running the route: `announceBytes` as Content-Length (absent:
   * chunked), then `sendBytes` bytes ('forever': until the client closes), `chunkBytes` at a time, one chunk
   * every `everyMs`. For downloads that never end, trickle, or lie about their size.
   */
  stream?: { announceBytes?: number; sendBytes: number | 'forever'; chunkBytes?: number; everyMs?: number };
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly status: number;
  readonly atMs: number;
  readonly headers: Record<string, string>;
}

export interface BoxServerControl {
  /** Extension: `isolated` users' items are hidden from others unless reached through a shared link (BoxApi header). */
  addUser(opts?: { name?: string; login?: string; spaceAmountBytes?: number; maxUploadSizeBytes?: number; enterpriseAdmin?: boolean; isolated?: boolean }): { userId: string; token: string };
  issueToken(userId: string): string;
  registerOAuthClient(opts: { clientId: string; clientSecret: string; redirectUris?: string[]; userId?: string }): void;
  issueAuthCode(clientId: string, userId?: string, redirectUri?: string): string;
  failNext(rule: FaultRule): void;
  clearFaults(): void;
  commitAccepted(count: number, retryAfterSec?: number): void;
  expireAllTokens(): void;
  revokeAll(userId?: string): void;
  setRateLimit(opts: { requests: number; windowMs: number } | null): void;
  setEventChaos(opts: { duplicate?: boolean; reorder?: boolean }): void;
  as(userId: string): ServerActor;
  requests(): readonly RecordedRequest[];
  clearRequests(): void;
  /** Extension: every open upload session expires now (its next use answers 410 session_expired). */
  expireUploadSessions(): void;
  /**
   * Extension, for clients' tests: damage the zip archives served from now on. Entries are named by their path
   * in the archive: `drop` leaves them out, `corrupt` serves them with their first byte changed, `rename` gives
   * them another name (a hostile one, say). `null` serves archives whole again.
   */
  zipFaults(f: ZipFaults | null): void;
}

export interface ZipFaults {
  readonly drop?: readonly string[];
  readonly corrupt?: readonly string[];
  readonly rename?: Readonly<Record<string, string>>;
}

export interface ServerActor {
  createFolder(parentId: string, name: string): { id: string; etag: string };
  uploadFile(parentId: string, name: string, content: Buffer | string, opts?: { contentModifiedAt?: string }): { id: string; etag: string; sha1: string; versionId: string };
  uploadVersion(fileId: string, content: Buffer | string): { etag: string; sha1: string; versionId: string };
  rename(kind: 'file' | 'folder', id: string, name: string): void;
  move(kind: 'file' | 'folder', id: string, parentId: string, name?: string): void;
  trash(kind: 'file' | 'folder', id: string): void;
  restore(kind: 'file' | 'folder', id: string, opts?: { parentId?: string; name?: string }): void;
  purge(kind: 'file' | 'folder', id: string): void;
  lock(fileId: string, opts?: { preventDownload?: boolean; expiresAt?: string }): void;
  unlock(fileId: string): void;
  createWebLink(parentId: string, name: string, url: string): { id: string };
  updateWebLink(id: string, url: string): void;
  setSyncState(folderId: string, state: 'synced' | 'not_synced' | 'partially_synced'): void;
  getItem(kind: 'file' | 'folder' | 'web_link', id: string): Record<string, unknown> | null;
  listFolder(folderId: string): Array<{ type: string; id: string; name: string; etag: string; sha1?: string }>;
  readFile(fileId: string): Buffer;
  findByPath(path: string): { type: string; id: string } | null;
}
