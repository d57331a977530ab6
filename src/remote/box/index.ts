export { createBoxAdapter, type BoxAdapter } from './create-box-adapter.js';
export type { BoxAdapterOptions } from './options.js';
export type { BoxActions, TrashedItemInfo, ItemInfo, ItemLock, SharedLinkInfo, FileVersionInfo, SharedLinkAccess } from './box-actions.js';
export type { BoxAuth, BoxAuthConfig } from './auth.js';
export { fileTokenStore, writeTokenFile, type Tokens, type TokenStore } from './token-file.js';
export { classify, retryAfterMs, type FailureFacts } from './classify.js';
export { remoteError, dispositionOf, type RemoteErrorCode } from './error-codes.js';
