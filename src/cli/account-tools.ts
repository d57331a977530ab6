/**
 * Small helpers for the commands that talk to Box outside a sync (`boxsync ls`, `init`, `config check`): a Box
 * client from a config (no journal), and folder paths resolved the way Box compares names (case-insensitively).
 */
import type { Config } from '../config/index.js';
import { foldKey } from '../core/paths.js';
import { asRemoteId, type RemoteEntry, type RemoteId } from '../core/model.js';
import { silentLogger } from '../logger.js';
import { createBoxAdapter, type BoxAdapter } from '../remote/box/index.js';

export function adapterForConfig(config: Pick<Config, 'remote' | 'auth'>): BoxAdapter {
  return createBoxAdapter({
    apiUrl: config.remote.apiUrl,
    uploadUrl: config.remote.uploadUrl,
    tokenUrl: config.remote.tokenUrl,
    auth: config.auth,
    logger: silentLogger,
  });
}

/** Every entry of a folder (all pages; bounded by the adapter's listing deadline). */
export async function listAll(adapter: BoxAdapter, id: RemoteId): Promise<RemoteEntry[]> {
  const out: RemoteEntry[] = [];
  for await (const page of adapter.store.listFolder(id)) out.push(...page.entries);
  return out;
}

/** The folder at a Box path ("/" or "" is the account root; "Work/Reports" or "/Work/Reports"). */
export async function resolveBoxPath(adapter: BoxAdapter, path: string): Promise<{ id: RemoteId; path: string; chain: readonly { id: RemoteId; name: string }[] }> {
  const parts = path.split('/').filter((p) => p !== '');
  let id = asRemoteId('0');
  const walked: string[] = [];
  // The folders walked, from the top of the account ('0') to the folder itself.
  const chain: { id: RemoteId; name: string }[] = [{ id, name: '' }];
  for (const name of parts) {
    const entries = await listAll(adapter, id);
    const hit = entries.find((e) => e.kind === 'folder' && foldKey(e.name) === foldKey(name));
    if (!hit) {
      const where = walked.length === 0 ? 'the top of your Box account' : `/${walked.join('/')}`;
      const near = entries.filter((e) => e.kind === 'folder').map((e) => e.name).slice(0, 10);
      throw new Error(`there is no folder "${name}" in ${where}${near.length > 0 ? ` (folders there: ${near.join(', ')})` : ''}; \`boxsync ls ${where === 'the top of your Box account' ? '' : where}\` lists them`);
    }
    id = hit.id;
    walked.push(hit.name);
    chain.push({ id, name: hit.name });
  }
  return { id, path: `/${walked.join('/')}`, chain };
}
