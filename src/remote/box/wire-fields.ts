/**
 * Two field decoders that both decode.ts and the answer schemas (schemas.ts) use; their own file so that decode.ts,
 * which validates items through schemas.ts, and schemas.ts do not import each other.
 */
import type { RemoteKind } from '../../core/model.js';

export function kindOfWire(type: string | undefined): RemoteKind | null {
  switch (type) {
    case 'file':
      return 'file';
    case 'folder':
      return 'folder';
    case 'web_link':
      return 'weblink';
    default:
      return null;
  }
}

export function decodeTime(s: string | null | undefined): number | null {
  if (!s) return null;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : ms;
}
