/**
 * Operation constructors for the planner: each one fills in the root and the guard from observed entries, so
 * that decisions only say what to do and why. PURE.
 */
import type { LocalEntry, RelPath, RemoteEntry, RemoteId } from './model.js';
import type { Operation, ProblemCode } from './operations.js';
import { candidate, expectOf, localGuard, type Candidate, type PlanContext } from './plan-context.js';

export function forget(ctx: PlanContext, path: RelPath, reason: string): Candidate {
  return candidate({ kind: 'forget', root: ctx.root, path, reason });
}

export function link(ctx: PlanContext, path: RelPath, remoteId: RemoteId, reason: string, oldBasePath?: RelPath): Candidate {
  const op: Operation = { kind: 'link', root: ctx.root, path, remoteId, reason };
  return oldBasePath !== undefined && oldBasePath !== path ? candidate(op, oldBasePath) : candidate(op);
}

export function report(ctx: PlanContext, path: RelPath, problem: ProblemCode, reason: string): Candidate {
  return candidate({ kind: 'report', root: ctx.root, path, problem, reason });
}

export function download(ctx: PlanContext, path: RelPath, r: RemoteEntry, local: LocalEntry | null, reason: string): Candidate {
  return candidate({ kind: 'download', root: ctx.root, path, remoteId: r.id, expect: expectOf(r), guard: localGuard(local), reason });
}

export function uploadVersion(ctx: PlanContext, path: RelPath, r: RemoteEntry, local: LocalEntry, reason: string): Candidate {
  return candidate({ kind: 'upload-version', root: ctx.root, path, remoteId: r.id, ifMatch: r.etag, guard: localGuard(local), reason });
}

export function remoteTrash(ctx: PlanContext, path: RelPath, r: RemoteEntry, reason: string): Candidate {
  return candidate({ kind: 'remote-trash', root: ctx.root, path, remoteId: r.id, itemKind: r.kind, ifMatch: r.etag, reason });
}

export function localTrash(ctx: PlanContext, local: LocalEntry, reason: string): Candidate {
  return candidate({ kind: 'local-trash', root: ctx.root, path: local.path, guard: localGuard(local), reason });
}

export function conflictCopy(ctx: PlanContext, local: LocalEntry, to: RelPath, reason: string): Candidate {
  return candidate({ kind: 'conflict-copy', root: ctx.root, path: local.path, to, guard: localGuard(local), reason });
}

export function writeWeblink(ctx: PlanContext, path: RelPath, r: RemoteEntry, local: LocalEntry | null, reason: string): Candidate {
  return candidate({ kind: 'write-weblink', root: ctx.root, path, remoteId: r.id, url: r.url ?? '', guard: localGuard(local), reason });
}

/** Human words for kinds in reasons. */
export function kindWord(kind: string): string {
  switch (kind) {
    case 'weblink':
      return 'web link';
    case 'symlink':
      return 'symbolic link';
    case 'other':
      return 'special file';
    default:
      return kind;
  }
}
