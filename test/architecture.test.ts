/**
 * Keeps the dependency direction true: cli -> daemon -> engine -> core; the engine sees adapters only
 * through ports; adapters never import engine, daemon or each other; box-server imports only its own files.
 * Inside daemon/: lifecycle -> control -> the files at daemon/'s top (the composition root compose.ts and the
 * state-dir lock, which the CLI's one-shot commands use too); control never reaches back into the lifecycle.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/cli.js';

const src = join(repoRoot, 'src');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function area(file: string): string {
  const rel = relative(src, file).split('/');
  if (rel.length === 1) return rel[0]!.replace(/\.ts$/, '');
  if (rel[0] === 'remote') return 'remote';
  if (rel[0] === 'daemon') return rel.length === 2 ? 'daemon' : `daemon/${rel[1]}`;
  return rel[0]!;
}

function imports(file: string, text = readFileSync(file, 'utf8')): { spec: string; target: string | null }[] {
  const out: { spec: string; target: string | null }[] = [];
  // `[^;'"]` spans newlines: a multi-line `import {\n a,\n b\n} from '...'` is read like a one-line one.
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const spec = (m[1] ?? m[2])!;
    out.push({ spec, target: spec.startsWith('.') ? resolve(dirname(file), spec) : null });
  }
  return out;
}

// Which src areas each area may import. Library imports (npm, node:*) are checked separately for core.
const allowed: Record<string, readonly string[]> = {
  core: ['core'],
  ports: ['core', 'ports'],
  journal: ['core', 'ports', 'journal'],
  remote: ['core', 'ports', 'remote', 'logger'],
  local: ['core', 'ports', 'local', 'logger'],
  engine: ['core', 'ports', 'engine', 'logger', 'config'],
  daemon: ['core', 'ports', 'engine', 'journal', 'remote', 'local', 'logger', 'config'],
  'daemon/control': ['core', 'ports', 'engine', 'journal', 'remote', 'local', 'logger', 'config', 'daemon'],
  'daemon/lifecycle': ['core', 'ports', 'engine', 'journal', 'remote', 'local', 'logger', 'config', 'daemon', 'daemon/control'],
  cli: ['core', 'ports', 'engine', 'daemon', 'daemon/control', 'daemon/lifecycle', 'cli', 'logger', 'config', 'journal', 'remote', 'local', 'box-server'],
  'box-server': ['box-server'],
  logger: ['core'],
  config: ['core', 'config'],
};

/** The node:fs imports among `of`, as "file imports spec" lines. */
function diskImports(of: readonly string[]): string[] {
  return of.flatMap((f) => imports(f).flatMap(({ spec }) => (/^(node:)?fs(\/promises)?$/.test(spec) ? [`${relative(src, f)} imports ${spec}`] : [])));
}

// A daemon sub-folder without its own rule (a new one) sits at the lifecycle's level.
function allowedFor(from: string): readonly string[] {
  return allowed[from] ?? (from.startsWith('daemon/') ? allowed['daemon/lifecycle']! : []);
}

describe('architecture', () => {
  const files = walk(src);

  it('finds the sources', () => {
    expect(files.length).toBeGreaterThan(5);
  });

  it('keeps the dependency direction', () => {
    const violations: string[] = [];
    for (const f of files) {
      const from = area(f);
      for (const { spec, target } of imports(f)) {
        if (!target) continue;
        if (!target.startsWith(src)) continue;
        const to = area(target.replace(/\.js$/, '.ts'));
        if (!allowedFor(from).includes(to) && to !== from) violations.push(`${relative(src, f)} (${from}) imports ${spec} (${to})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('the layer rules themselves run one way: no area reaches, through others, back to itself', () => {
    const loops: string[] = [];
    const visit = (at: string, trail: string[]): void => {
      for (const next of allowed[at] ?? []) {
        if (next === at) continue;
        if (next === trail[0]) loops.push([...trail, next].join(' -> '));
        else if (!trail.includes(next)) visit(next, [...trail, next]);
      }
    };
    for (const a of Object.keys(allowed)) visit(a, [a]);
    expect(loops).toEqual([]);
  });

  it('keeps core pure: no node:*, no npm packages', () => {
    const violations: string[] = [];
    for (const f of files.filter((x) => area(x) === 'core')) {
      for (const { spec, target } of imports(f)) if (!target) violations.push(`${relative(src, f)} imports ${spec}`);
    }
    expect(violations).toEqual([]);
  });

  it('keeps the engine off the disk: it reaches files only through the LocalFs port', () => {
    expect(diskImports(files.filter((x) => area(x) === 'engine'))).toEqual([]);
  });

  it('keeps the item commands off the disk: they reach files only through the LocalFs port', () => {
    const items = files.filter((f) => relative(src, f).startsWith('daemon/control/items/'));
    expect(items.length).toBeGreaterThan(5);
    expect(diskImports(items)).toEqual([]);
  });

  it('reads multi-line imports', () => {
    const text = "import {\n  a,\n  b,\n} from '../daemon/x.js';\nimport type {\n  C\n} from 'node:fs';\nconst s = 'from y';\n";
    expect(imports(join(src, 'engine', 'f.ts'), text).map((i) => i.spec)).toEqual(['../daemon/x.js', 'node:fs']);
  });

  it('only the cli reaches box-server, and only through its entry points', () => {
    const violations: string[] = [];
    for (const f of files.filter((x) => area(x) !== 'box-server')) {
      for (const { spec, target } of imports(f)) {
        if (target && area(target.replace(/\.js$/, '.ts')) === 'box-server' && !/box-server\/(cli|index)\.js$/.test(spec)) {
          violations.push(`${relative(src, f)} imports ${spec}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });
});
