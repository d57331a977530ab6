/**
 * Where a local path stands, in one word: `boxsync status PATH` (control-protocol.ts PathStatus) and `boxsync info`
 * (item-protocol.ts) both answer with it. Its own file so that neither protocol imports the other back.
 */
export type PathState = 'in-sync' | 'pending' | 'failed' | 'excluded' | 'unknown' | 'outside';
