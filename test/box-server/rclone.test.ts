// rclone's Box backend, a third independent client (Debian's rclone, unmodified: it hard-codes
// https://api.box.com/2.0 and https://upload.box.com/api/2.0), against a real `boxsync server --as-box` child
// process: rclone reaches it only through the printed HTTPS_PROXY and trusts it only through --ca-cert, with the
// developer token as the remote's access_token. One `it` per rclone operation; after each, what box-server holds is
// read from its store (the HTTP control surface, `as/1/...`) or its API, never from rclone's own account of it.
// Without rclone the file fails under CI=true (.ci/run installs it) and is skipped with a message otherwise.
import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsCall, startAsBoxChild, type AsBoxChild } from '../support/as-box.js';
import { makeTempDir } from '../support/tmp.js';

const rcloneFound = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0;
const inCi = process.env.CI === 'true';
if (!rcloneFound && !inCi) {
  process.stderr.write('test/box-server/rclone.test.ts: skipped: rclone is not installed (apt-get install -y rclone); under CI=true this fails\n');
}

const BIG_BYTES = 60 * 1024 * 1024;

interface RcloneResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function sha1(b: Buffer | string): string {
  return createHash('sha1').update(b).digest('hex');
}

describe.skipIf(!rcloneFound && !inCi)("rclone's Box backend through boxsync server --as-box", { timeout: 180_000 }, () => {
  let server: AsBoxChild;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let ca: Buffer;
  let conf = '';
  const local = (...p: string[]): string => join(tmp.dir, 'up', ...p);
  /** Local files and their sha1, as uploaded. */
  const files = new Map<string, { sha1: string; size: number; mtimeSec: number }>();
  const bigHash = createHash('sha1');

  function rclone(args: readonly string[], stdin?: string): Promise<RcloneResult> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        'rclone',
        ['--config', conf, '--ca-cert', server.caFile, '--low-level-retries', '2', '--retries', '1', ...args],
        {
          timeout: 180_000,
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, HTTPS_PROXY: server.proxyUrl, https_proxy: server.proxyUrl, NO_PROXY: '', no_proxy: '', RCLONE_CONFIG: conf },
        },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
          if (err && typeof err.code !== 'number') reject(new Error(`rclone ${args.join(' ')}: ${err.message}\n${stderr}`));
          else resolve({ code, stdout, stderr });
        },
      );
      child.stdin?.end(stdin);
    });
  }

  async function ok(args: readonly string[], stdin?: string): Promise<string> {
    const r = await rclone(args, stdin);
    expect(r.code, `rclone ${args.join(' ')}\n${r.stderr}`).toBe(0);
    return r.stdout;
  }

  /** box-server's control surface (its store, as user 1). */
  async function as1(action: string, ...args: unknown[]): Promise<unknown> {
    const r = await httpsCall('POST', `${server.baseUrl}/_control/as/1/${action}`, {
      ca,
      body: JSON.stringify({ args }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status, r.body.toString()).toBe(200);
    return r.json().result;
  }
  const find = async (path: string): Promise<{ type: string; id: string } | null> => (await as1('findByPath', path)) as { type: string; id: string } | null;
  async function mustFind(path: string, type: 'file' | 'folder'): Promise<string> {
    const hit = await find(path);
    expect(hit, `box-server holds ${path}`).not.toBeNull();
    expect(hit!.type).toBe(type);
    return hit!.id;
  }
  const readRemote = async (id: string): Promise<Buffer> => Buffer.from(((await as1('readFile', id)) as { base64: string }).base64, 'base64');
  const names = async (folderId: string): Promise<string[]> => ((await as1('listFolder', folderId)) as Array<{ name: string }>).map((e) => e.name).sort();
  const api = (method: string, path: string) => httpsCall(method, `${server.baseUrl}/2.0${path}`, { ca, token: server.token });
  async function requests(): Promise<Array<{ method: string; path: string; status: number }>> {
    const r = await httpsCall('POST', `${server.baseUrl}/_control/requests`, { ca, body: '{}', headers: { 'Content-Type': 'application/json' } });
    return r.json().result as Array<{ method: string; path: string; status: number }>;
  }
  async function clearRequests(): Promise<void> {
    await httpsCall('POST', `${server.baseUrl}/_control/clearRequests`, { ca, body: '{}', headers: { 'Content-Type': 'application/json' } });
  }

  beforeAll(async () => {
    if (!rcloneFound) throw new Error('rclone is not installed and CI=true: .ci/run installs it (apt-get install -y rclone); this test needs it');
    tmp = await makeTempDir('rclone-as-box-');
    server = await startAsBoxChild(['--data', join(tmp.dir, 'box-data')]);
    ca = await readFile(server.caFile);
    conf = join(tmp.dir, 'rclone.conf');
    await writeFile(conf, `[box]\ntype = box\naccess_token = ${server.token}\n`, { mode: 0o600 });

    // The local tree: small files, a 0-byte file, names with spaces and accents, a 60 MB file (rclone's chunked
    // upload path starts at 50 MiB). Whole-second mtimes in the past, to check that they travel both ways.
    await mkdir(local('sub dir'), { recursive: true });
    await mkdir(local('mové'), { recursive: true });
    const small: Array<[string, string | Buffer]> = [
      ['a.txt', 'alpha\n'],
      ['empty.bin', Buffer.alloc(0)],
      ['sub dir/with space.txt', 'spaces in both names\n'],
      ['mové/café crème ñ.txt', 'accents: é è ñ ü\n'],
      ['mové/second.txt', 'second\n'],
    ];
    let t = 1_600_000_000;
    for (const [rel, content] of small) {
      await writeFile(local(rel), content);
      await utimes(local(rel), t, t);
      files.set(rel, { sha1: sha1(content), size: Buffer.byteLength(content), mtimeSec: t });
      t += 3_600;
    }
    const out = createWriteStream(local('big.bin'));
    for (let done = 0; done < BIG_BYTES; done += 1 << 20) {
      const chunk = randomBytes(1 << 20);
      bigHash.update(chunk);
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    await utimes(local('big.bin'), t, t);
    files.set('big.bin', { sha1: bigHash.digest('hex'), size: BIG_BYTES, mtimeSec: t });
  }, 120_000);

  afterAll(async () => {
    if (server) expect(await server.stop(), `box-server exits 0 on SIGTERM (stderr: ${server.stderr()})`).toBe(0);
    await tmp?.cleanup();
  });

  it('copy up: small files, a 0-byte file, spaces and accents, and 60 MB through an upload session', async () => {
    await clearRequests();
    await ok(['copy', join(tmp.dir, 'up'), 'box:t']);
    for (const [rel, f] of files) {
      const id = await mustFind(`/t/${rel}`, 'file');
      const item = (await as1('getItem', 'file', id)) as Record<string, unknown>;
      expect(item.sha1, rel).toBe(f.sha1);
      expect(item.size, rel).toBe(f.size);
      expect(Date.parse(String(item.content_modified_at)) / 1000, `${rel}: content_modified_at is the local mtime`).toBe(f.mtimeSec);
    }
    expect((await readRemote(await mustFind('/t/a.txt', 'file'))).toString()).toBe('alpha\n');
    const log = await requests();
    expect(log.some((r) => r.method === 'POST' && r.path === '/api/2.0/files/upload_sessions' && r.status === 201), 'the 60 MB file took the chunked path').toBe(true);
    expect(log.filter((r) => r.method === 'PUT' && r.path.startsWith('/api/2.0/files/upload_sessions/')).length).toBeGreaterThanOrEqual(Math.ceil(BIG_BYTES / 8_388_608));
    // rclone preflights each upload with OPTIONS /2.0/files/content/ (trailing slash): answered, not 404.
    expect(log.filter((r) => r.method === 'OPTIONS' && r.path === '/2.0/files/content/').every((r) => r.status === 200)).toBe(true);
  });

  it('lsjson -R --hash lists what box-server holds, with its ids and sha1s', async () => {
    const entries = JSON.parse(await ok(['lsjson', '-R', '--hash', 'box:t'])) as Array<{ Path: string; IsDir: boolean; Size: number; ID: string; Hashes?: { sha1?: string } }>;
    const got = new Map(entries.filter((e) => !e.IsDir).map((e) => [e.Path, e]));
    expect([...got.keys()].sort()).toEqual([...files.keys()].sort());
    for (const [rel, f] of files) {
      const e = got.get(rel)!;
      expect(e.Size, rel).toBe(f.size);
      expect(e.Hashes?.sha1, rel).toBe(f.sha1);
      expect(e.ID, rel).toBe(await mustFind(`/t/${rel}`, 'file'));
    }
    expect(entries.filter((e) => e.IsDir).map((e) => e.Path).sort()).toEqual(['mové', 'sub dir']);
  });

  it('check finds no differences, and hashsum sha1 gives the local sha1s', async () => {
    const check = await rclone(['check', join(tmp.dir, 'up'), 'box:t']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toMatch(/0 differences found/);
    const sums = await ok(['hashsum', 'sha1', 'box:t']);
    const parsed = new Map(sums.trim().split('\n').map((l) => [l.slice(42), l.slice(0, 40)]));
    for (const [rel, f] of files) expect(parsed.get(rel), rel).toBe(f.sha1);
  });

  it('copy down: the same bytes and the same mtimes', async () => {
    const down = join(tmp.dir, 'down');
    await ok(['copy', 'box:t', down]);
    for (const [rel, f] of files) {
      const st = await stat(join(down, rel));
      expect(st.size, rel).toBe(f.size);
      expect(Math.round(st.mtimeMs / 1000), `${rel}: mtime`).toBe(f.mtimeSec);
      if (rel !== 'big.bin') expect(sha1(await readFile(join(down, rel))), rel).toBe(f.sha1);
    }
    const big = createHash('sha1').update(await readFile(join(down, 'big.bin'))).digest('hex');
    expect(big).toBe(files.get('big.bin')!.sha1);
  });

  it('moveto renames a file in place (same id)', async () => {
    const id = await mustFind('/t/a.txt', 'file');
    await ok(['moveto', 'box:t/a.txt', 'box:t/a-renamed.txt']);
    expect(await find('/t/a.txt')).toBeNull();
    expect(await mustFind('/t/a-renamed.txt', 'file')).toBe(id);
  });

  it('moveto moves a file and a folder between folders (same ids, contents kept)', async () => {
    const fileId = await mustFind('/t/mové/second.txt', 'file');
    await ok(['moveto', 'box:t/mové/second.txt', 'box:t/sub dir/second.txt']);
    expect(await find('/t/mové/second.txt')).toBeNull();
    expect(await mustFind('/t/sub dir/second.txt', 'file')).toBe(fileId);

    const folderId = await mustFind('/t/mové', 'folder');
    await ok(['moveto', 'box:t/mové', 'box:t/sub dir/mové moved']);
    expect(await find('/t/mové')).toBeNull();
    expect(await mustFind('/t/sub dir/mové moved', 'folder')).toBe(folderId);
    expect(await names(folderId)).toEqual(['café crème ñ.txt']);
  });

  it('copyto copies server-side (a new file, the same bytes, no upload)', async () => {
    await clearRequests();
    const srcId = await mustFind('/t/a-renamed.txt', 'file');
    await ok(['copyto', 'box:t/a-renamed.txt', 'box:t/sub dir/a-copy.txt']);
    const copyId = await mustFind('/t/sub dir/a-copy.txt', 'file');
    expect(copyId).not.toBe(srcId);
    expect((await readRemote(copyId)).toString()).toBe('alpha\n');
    const log = await requests();
    expect(log.some((r) => r.method === 'POST' && r.path === `/2.0/files/${srcId}/copy` && r.status === 201)).toBe(true);
    expect(log.some((r) => r.path.endsWith('/files/content'))).toBe(false);
  });

  it('copyto onto an existing name uploads a new version of that file', async () => {
    const id = await mustFind('/t/a-renamed.txt', 'file');
    const src = join(tmp.dir, 'replacement.txt');
    await writeFile(src, 'replaced content\n');
    await ok(['copyto', src, 'box:t/a-renamed.txt']);
    expect(await mustFind('/t/a-renamed.txt', 'file')).toBe(id);
    expect((await readRemote(id)).toString()).toBe('replaced content\n');
    const versions = await api('GET', `/files/${id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.json().total_count).toBe(1);
  });

  it('rcat streams stdin into a new file', async () => {
    await ok(['rcat', 'box:t/rcat.txt'], 'from stdin\n');
    expect((await readRemote(await mustFind('/t/rcat.txt', 'file'))).toString()).toBe('from stdin\n');
  });

  it('delete moves a file to the trash', async () => {
    const id = await mustFind('/t/empty.bin', 'file');
    await ok(['delete', 'box:t/empty.bin']);
    expect(await find('/t/empty.bin')).toBeNull();
    const item = await api('GET', `/files/${id}`);
    expect(item.json().item_status).toBe('trashed');
  });

  it('rmdir is refused on a non-empty folder (nothing deleted) and removes an empty one', async () => {
    const refused = await rclone(['rmdir', 'box:t/sub dir']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/folder_not_empty/);
    const id = await mustFind('/t/sub dir', 'folder');
    expect(await names(id)).toEqual(['a-copy.txt', 'mové moved', 'second.txt', 'with space.txt']);
    await ok(['mkdir', 'box:t/empty dir']);
    await mustFind('/t/empty dir', 'folder');
    await ok(['rmdir', 'box:t/empty dir']);
    expect(await find('/t/empty dir')).toBeNull();
  });

  it('purge removes a folder with its contents', async () => {
    const id = await mustFind('/t/sub dir', 'folder');
    await ok(['purge', 'box:t/sub dir']);
    expect(await find('/t/sub dir')).toBeNull();
    expect((await api('GET', `/folders/${id}`)).status).toBe(404);
    expect(await names(await mustFind('/t', 'folder'))).toEqual(['a-renamed.txt', 'big.bin', 'rcat.txt']);
  });

  it('cleanup empties the trash', async () => {
    const before = await api('GET', '/folders/trash/items');
    expect(Number(before.json().total_count)).toBeGreaterThan(0);
    await ok(['cleanup', 'box:']);
    const after = await api('GET', '/folders/trash/items');
    expect(after.json().total_count).toBe(0);
  });

  it('link makes a shared link, the one box-server then holds', async () => {
    const url = (await ok(['link', 'box:t/rcat.txt'])).trim();
    expect(url).toMatch(/^https:\/\/app\.box\.com\/s\/\w+$/);
    const item = (await as1('getItem', 'file', await mustFind('/t/rcat.txt', 'file'))) as { shared_link?: { url?: string } };
    expect(item.shared_link?.url).toBe(url);
  });

  it("about reports the user's quota and usage", async () => {
    const about = JSON.parse(await ok(['about', '--json', 'box:'])) as { total: number; used: number; free: number };
    const me = (await api('GET', '/users/me')).json();
    expect(about.total).toBe(me.space_amount);
    expect(about.used).toBe(me.space_used);
    expect(about.free).toBe(Number(me.space_amount) - Number(me.space_used));
  });

  it('bisync --resync, then one change on each side, and a second bisync carries both', async () => {
    const side = join(tmp.dir, 'bisync');
    await mkdir(side);
    await writeFile(join(side, 'one.txt'), 'one\n');
    await writeFile(join(side, 'two.txt'), 'two\n');
    await ok(['mkdir', 'box:bis']);
    const workdir = join(tmp.dir, 'bisync-work');
    await ok(['bisync', side, 'box:bis', '--resync', '--workdir', workdir]);
    const bis = await mustFind('/bis', 'folder');
    expect(await names(bis)).toEqual(['one.txt', 'two.txt']);

    // One change on each side: a local edit, a remote upload (through box-server's store, as on the web).
    await writeFile(join(side, 'one.txt'), 'one, edited locally\n');
    const later = Math.floor(Date.now() / 1000) + 60;
    await utimes(join(side, 'one.txt'), later, later);
    await as1('uploadFile', bis, 'remote.txt', 'made on the server\n');
    await ok(['bisync', side, 'box:bis', '--workdir', workdir]);
    expect((await readRemote(await mustFind('/bis/one.txt', 'file'))).toString()).toBe('one, edited locally\n');
    expect(await readFile(join(side, 'remote.txt'), 'utf8')).toBe('made on the server\n');
    expect(await names(bis)).toEqual(['one.txt', 'remote.txt', 'two.txt']);
  });
});
