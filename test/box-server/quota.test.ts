// The storage quota on upload POSTs, as Box enforces it: the bytes received count whether or not the attributes
// announced a size, a new version counts like a new file, and a refused upload stores nothing. The check sums a
// user's files only when the bytes ever stored could reach the quota (store.ts, overQuota): these cases cross
// from the fast answer to the exact one on a fresh server.
import { describe, expect, it } from 'vitest';
import { arr, boxHttp, obj, useBoxServer } from '../support/box-server.js';

const handle = useBoxServer();

describe('quota on upload POSTs', () => {
  it('accepts uploads up to the quota and refuses the one that would pass it, storing nothing', async () => {
    const user = handle.srv.control.addUser({ spaceAmountBytes: 10 });
    const http = boxHttp(handle.srv, user.token);
    const ok1 = await http.upload('/files/content', { name: 'a.txt', parent: { id: '0' } }, 'four');
    expect(ok1.status, ok1.text).toBe(201);
    const ok2 = await http.upload('/files/content', { name: 'b.txt', parent: { id: '0' } }, 'more');
    expect(ok2.status, ok2.text).toBe(201);
    const over = await http.upload('/files/content', { name: 'c.txt', parent: { id: '0' } }, 'xyz');
    expect(over.status, over.text).toBe(403);
    expect(obj(over.json).code).toBe('storage_limit_exceeded');
    const fileId = String(obj(arr(obj(ok1.json).entries)[0]).id);
    const version = await http.upload(`/files/${fileId}/content`, { name: 'a.txt' }, 'abc');
    expect(version.status, version.text).toBe(403);
    expect(obj(version.json).code).toBe('storage_limit_exceeded');
    const names = arr(obj((await http.get('/folders/0/items')).json).entries).map((e) => String(obj(e).name));
    expect(names.sort()).toEqual(['a.txt', 'b.txt']);
    const fits = await http.upload('/files/content', { name: 'd.txt', parent: { id: '0' } }, 'xy');
    expect(fits.status, fits.text).toBe(201);
  });
});
