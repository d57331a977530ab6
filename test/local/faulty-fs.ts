/**
 * Fault injection for the local adapter's injected fs: wraps a real FsModule (node:fs or memfs) and makes chosen
 * calls fail with a chosen errno, the way the kernel would (ENOSPC on a full disk, EACCES, EXDEV).
 */
import type { FsModule } from '../../src/local/fs-module.js';

type Method = keyof FsModule['promises'];
export type FaultRule = (method: Method, args: readonly unknown[]) => string | undefined;

export function errnoError(code: string, syscall: string, path: unknown): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault, ${syscall} '${String(path)}'`), { code, syscall, path: String(path) });
}

export function withFaults(base: FsModule, rule: FaultRule): FsModule & { calls: { method: Method; args: readonly unknown[] }[] } {
  const calls: { method: Method; args: readonly unknown[] }[] = [];
  const promises = new Proxy(base.promises, {
    get(target, prop, receiver) {
      const orig = Reflect.get(target, prop, receiver) as unknown;
      if (typeof orig !== 'function') return orig;
      return async (...args: unknown[]) => {
        calls.push({ method: prop as Method, args });
        const code = rule(prop as Method, args);
        if (code !== undefined) throw errnoError(code, String(prop), args[0]);
        return (orig as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { promises, createReadStream: base.createReadStream, calls };
}
