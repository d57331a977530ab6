/**
 * Injected faults and rate limiting. A rule matches a method (any when absent) and a pathname (exact, a prefix
 * ending in '*', or a RegExp) and fires for its next `count` matching requests: a delay, a Box error status, or
 * a connection reset before the response or halfway through a body.
 */
import { SlidingWindow } from './box-limits.js';
import type { FaultRule } from './types.js';

interface LiveRule {
  readonly rule: FaultRule;
  remaining: number;
}

export class Faults {
  private rules: LiveRule[] = [];
  private rate: SlidingWindow | null = null;

  add(rule: FaultRule): void {
    this.rules.push({ rule, remaining: rule.count ?? 1 });
  }

  clear(): void {
    this.rules = [];
  }

  /** The first live rule matching this request, consuming one of its uses. */
  take(method: string, pathname: string): FaultRule | null {
    for (const live of this.rules) {
      if (live.remaining <= 0) continue;
      const r = live.rule;
      if (r.method && r.method.toUpperCase() !== method.toUpperCase()) continue;
      if (!pathMatches(r.path, pathname)) continue;
      live.remaining -= 1;
      this.rules = this.rules.filter((x) => x.remaining > 0);
      return r;
    }
    return null;
  }

  setRateLimit(opts: { requests: number; windowMs: number } | null): void {
    this.rate = opts === null ? null : new SlidingWindow(opts.requests, opts.windowMs);
  }

  /** Seconds to wait when `key` is over the limit, else null (and the request is counted). */
  rateLimited(key: string, nowMs: number): number | null {
    return this.rate === null ? null : this.rate.take(key, nowMs);
  }
}

function pathMatches(pattern: string | RegExp, pathname: string): boolean {
  if (pattern instanceof RegExp) return pattern.test(pathname);
  if (pattern.endsWith('*')) return pathname.startsWith(pattern.slice(0, -1));
  return pathname === pattern;
}
