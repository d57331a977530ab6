// Upload error paths: multipart order, Content-MD5 (a SHA-1, despite the name), upload-session size floor,
// part digests and the part grid, overlapping parts and a wrong whole-file digest at commit. A refused
// upload must create nothing.
import { createHash } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { arr, boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';

const handle = useBoxServer();
const http = () => boxHttp(handle.srv);
let folderId = '';

beforeAll(async () => {
  const r = await http().post('/folders', { body: { name: `uploads-${process.pid}`, parent: { id: '0' } } });
  folderId = String(obj(r.json).id);
});

afterEach(async () => {
  const alive = await http().get('/users/me');
  expect(alive.status, 'box-server must keep serving after an error').toBe(200);
});

const sha1Hex = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');
const sha1B64 = (b: Buffer | string): string => createHash('sha1').update(b).digest('base64');

async function names(): Promise<string[]> {
  const r = await http().get(`/folders/${folderId}/items?limit=1000`);
  return arr(obj(r.json).entries).map((e) => String(obj(e).name));
}

const SESSION_SIZE = 20_000_000;

async function session(fileName: string): Promise<{ ends: Record<string, unknown>; partSize: number }> {
  const r = await http().post(`${handle.srv.uploadUrl}/files/upload_sessions`, { body: { folder_id: folderId, file_size: SESSION_SIZE, file_name: fileName } });
  expect(r.status, r.text).toBe(201);
  const body = obj(r.json);
  return { ends: obj(body.session_endpoints), partSize: Number(body.part_size) };
}

function putPart(url: unknown, bytes: Buffer, first: number, digest = `sha=${sha1B64(bytes)}`) {
  return http().put(String(url), {
    rawBody: bytes,
    headers: { 'Content-Type': 'application/octet-stream', 'Content-Range': `bytes ${first}-${first + bytes.length - 1}/${SESSION_SIZE}`, Digest: digest },
  });
}

describe('multipart uploads', () => {
  it('400 metadata_after_file_contents when the file part comes first', async () => {
    const form = new FormData();
    form.append('file', new Blob(['late']), 'late.txt');
    form.append('attributes', JSON.stringify({ name: 'late.txt', parent: { id: folderId } }));
    const r = await http().post(`${handle.srv.uploadUrl}/files/content`, { rawBody: form });
    expectBoxError(r, 'POST', 400, 'metadata_after_file_contents');
    expect(await names()).not.toContain('late.txt');
  });

  it('400 when a part is missing or attributes is not JSON', async () => {
    const onlyAttrs = new FormData();
    onlyAttrs.append('attributes', JSON.stringify({ name: 'nofile.txt', parent: { id: folderId } }));
    expectBoxError(await http().post(`${handle.srv.uploadUrl}/files/content`, { rawBody: onlyAttrs }), 'POST', 400, ['bad_request', 'invalid_request_parameters']);
    const onlyFile = new FormData();
    onlyFile.append('file', new Blob(['x']), 'x.txt');
    // A file part with no attributes before it is, on the wire, the metadata-after-contents case.
    expectBoxError(await http().post(`${handle.srv.uploadUrl}/files/content`, { rawBody: onlyFile }), 'POST', 400, ['bad_request', 'metadata_after_file_contents']);
    const badJson = new FormData();
    badJson.append('attributes', '{"name": "broken.txt", ');
    badJson.append('file', new Blob(['x']), 'x.txt');
    expectBoxError(await http().post(`${handle.srv.uploadUrl}/files/content`, { rawBody: badJson }), 'POST', 400, ['bad_request', 'invalid_request_parameters']);
    expect(await names()).not.toContain('nofile.txt');
  });

  it('400 bad_digest when Content-MD5 (the SHA-1 hex) does not match; a matching one is accepted', async () => {
    const r = await http().upload('/files/content', { name: 'digest.txt', parent: { id: folderId } }, 'real bytes', { headers: { 'Content-MD5': sha1Hex('other bytes') } });
    expectBoxError(r, 'POST', 400, 'bad_digest');
    expect(await names()).not.toContain('digest.txt');
    const ok = await http().upload('/files/content', { name: 'digest.txt', parent: { id: folderId } }, 'real bytes', { headers: { 'Content-MD5': sha1Hex('real bytes') } });
    expect(ok.status).toBe(201);
    const fid = String(obj(arr(obj(ok.json).entries)[0]).id);
    const v = await http().upload(`/files/${fid}/content`, { name: 'digest.txt' }, 'v2', { headers: { 'Content-MD5': sha1Hex('not v2') } });
    expectBoxError(v, 'POST', 400, 'bad_digest');
    expect(handle.srv.control.as('1').readFile(fid).toString()).toBe('real bytes');
  });
});

describe('upload sessions', () => {
  it('400 file_size_too_small below 20 MB (new file and new version)', async () => {
    const r = await http().post(`${handle.srv.uploadUrl}/files/upload_sessions`, { body: { folder_id: folderId, file_size: 1024, file_name: 'small.bin' } });
    expectBoxError(r, 'POST', 400, 'file_size_too_small');
    const f = await http().upload('/files/content', { name: 'small-version.bin', parent: { id: folderId } }, 'x');
    const fid = String(obj(arr(obj(f.json).entries)[0]).id);
    const v = await http().post(`${handle.srv.uploadUrl}/files/${fid}/upload_sessions`, { body: { file_size: 1024 } });
    expectBoxError(v, 'POST', 400, 'file_size_too_small');
  });

  it('part with a wrong Digest is refused and not stored', async () => {
    const { ends, partSize } = await session('bad-part.bin');
    const part = Buffer.alloc(partSize, 1);
    const r = await putPart(ends.upload_part, part, 0, `sha=${sha1B64('something else')}`);
    expectBoxError(r, 'PUT', r.status === 412 ? 412 : 400, ['bad_digest', 'precondition_failed', 'bad_request']);
    const listed = obj((await http().get(String(ends.list_parts))).json);
    expect(listed.total_count).toBe(0);
    const ok = await putPart(ends.upload_part, part, 0, `SHA=${sha1B64(part)}`);
    expect(ok.status, 'the SHA= prefix is accepted too').toBe(200);
    await http().delete(String(ends.abort));
  });

  it('416 for a range off the part grid or of the wrong size; 409 for an overlap', async () => {
    const { ends, partSize } = await session('grid.bin');
    const part = Buffer.alloc(partSize, 2);
    expectBoxError(await putPart(ends.upload_part, part, 1), 'PUT', 416, ['range_not_satisfiable', 'requested_range_not_satisfiable', 'bad_request']);
    const short = Buffer.alloc(1000, 3);
    expectBoxError(await putPart(ends.upload_part, short, 0), 'PUT', 416, ['range_not_satisfiable', 'requested_range_not_satisfiable', 'bad_request']);
    const r = await http().put(String(ends.upload_part), {
      rawBody: part,
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Range': `bytes 0-${partSize - 1}/${SESSION_SIZE + 1}`, Digest: `sha=${sha1B64(part)}` },
    });
    expectBoxError(r, 'PUT', 416, ['range_not_satisfiable', 'requested_range_not_satisfiable', 'bad_request']);
    expect((await putPart(ends.upload_part, part, 0)).status).toBe(200);
    const other = Buffer.alloc(partSize, 4);
    expectBoxError(await putPart(ends.upload_part, other, 0), 'PUT', 409, 'range_overlaps_existing_part');
    await http().delete(String(ends.abort));
  });

  it('commit with a wrong whole-file Digest or missing parts is refused and creates nothing', async () => {
    const { ends, partSize } = await session('commit.bin');
    const data = Buffer.alloc(SESSION_SIZE);
    for (let i = 0; i < SESSION_SIZE; i += 1000) data[i] = 7;
    const parts: unknown[] = [];
    for (let off = 0; off < SESSION_SIZE; off += partSize) {
      const chunk = data.subarray(off, Math.min(off + partSize, SESSION_SIZE));
      const r = await putPart(ends.upload_part, chunk, off);
      expect(r.status, r.text).toBe(200);
      parts.push(obj(r.json).part);
    }
    const wrong = await http().post(String(ends.commit), { body: { parts }, headers: { Digest: `sha=${sha1B64('nope')}` } });
    expectBoxError(wrong, 'POST', wrong.status === 412 ? 412 : 400, ['bad_digest', 'precondition_failed', 'bad_request']);
    const missing = await http().post(String(ends.commit), { body: { parts: parts.slice(1) }, headers: { Digest: `sha=${sha1B64(data)}` } });
    expectBoxError(missing, 'POST', 400, ['parts_mismatch', 'bad_request']);
    expect(await names()).not.toContain('commit.bin');
    const ok = await http().post(String(ends.commit), { body: { parts }, headers: { Digest: `sha=${sha1B64(data)}` } });
    expect(ok.status, ok.text).toBe(201);
    expect(obj(arr(obj(ok.json).entries)[0]).sha1).toBe(sha1Hex(data));
  });

  it('404 for an unknown or aborted session', async () => {
    const { ends } = await session('aborted.bin');
    expect((await http().delete(String(ends.abort))).status).toBe(204);
    expectBoxError(await http().get(String(ends.status)), 'GET', 404, 'not_found');
    expectBoxError(await http().get(`${handle.srv.uploadUrl}/files/upload_sessions/0000DEADBEEF`), 'GET', 404, 'not_found');
  });
});
