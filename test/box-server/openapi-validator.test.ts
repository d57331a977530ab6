// The validator itself: it must accept Box's own samples and reject what Box would never send, or the
// conformance suite built on it proves nothing.
import { describe, expect, it } from 'vitest';
import { exampleFromSchema, loadOpenApi } from '../support/openapi.js';

const v = loadOpenApi();

// Schemas box-server answers with, whose property-level examples in the spec compose into a full instance.
const SAMPLED = [
  'File--Mini',
  'Folder--Mini',
  'User--Full',
  'UploadSession',
  'UploadedPart',
  'UploadParts',
  'UploadUrl',
  'RealtimeServers',
  'ClientError',
  'OAuth2Error',
  'FileVersions',
  'FileVersion--Full',
  'TrashFile',
  'TrashFolder',
  'Lock',
] as const;

const fileMini = {
  type: 'file',
  id: '12345',
  etag: '1',
  sequence_id: '3',
  name: 'Contract.pdf',
  sha1: '85136C79CBF9FE36BB9D05D0639C70C265C18D37',
  file_version: { type: 'file_version', id: '12345', sha1: '134b65991ed521fcfe4724b7d814ab8ded5185dc' },
};

describe('openapi validator', () => {
  it.each(SAMPLED.filter((n) => v.spec.components.schemas[n] !== undefined))('accepts the spec examples of %s', (name) => {
    const example = exampleFromSchema(v.spec, v.spec.components.schemas[name]);
    expect(example).toBeTypeOf('object');
    expect(v.validateSchema(name, example)).toEqual([]);
  });

  it('accepts a Box file mini and a folder listing shaped like the docs', () => {
    expect(v.validateSchema('File--Mini', fileMini)).toEqual([]);
    const listing = { limit: 1000, next_marker: null, entries: [fileMini, { type: 'folder', id: '0', etag: null, sequence_id: null, name: 'All Files' }] };
    expect(v.validate({ method: 'GET', path: '/2.0/folders/0/items', status: 200, body: listing }).ok).toBe(true);
  });

  it('handles nullable: null is accepted where the spec says nullable, refused where it does not', () => {
    expect(v.validateSchema('File--Mini', { ...fileMini, sha1: null })).not.toEqual([]);
    expect(v.validateSchema('Folder--Mini', { type: 'folder', id: '1', etag: null, sequence_id: null, name: 'x' })).toEqual([]);
    expect(v.validateSchema('Folder--Mini', { type: 'folder', id: null, name: 'x' })).not.toEqual([]);
  });

  it('rejects wrong types, wrong enums, missing required fields and bad formats', () => {
    expect(v.validateSchema('File--Mini', { ...fileMini, id: 12345 })).not.toEqual([]);
    expect(v.validateSchema('File--Mini', { ...fileMini, type: 'folder' })).not.toEqual([]);
    const { id: _omit, ...noId } = fileMini;
    expect(v.validateSchema('File--Mini', noId)).not.toEqual([]);
    const err = { type: 'error', status: 404, code: 'not_found', message: 'Not Found', request_id: 'abc', help_url: 'https://developer.box.com/' };
    expect(v.validateSchema('ClientError', err)).toEqual([]);
    expect(v.validateSchema('ClientError', { ...err, status: '404' })).not.toEqual([]);
    expect(v.validateSchema('ClientError', { ...err, type: 'oops' })).not.toEqual([]);
    // The spec's code enum is incomplete by its own account; Box's detailed codes must pass, non-strings not.
    expect(v.validateSchema('ClientError', { ...err, status: 409, code: 'item_name_in_use' })).toEqual([]);
    expect(v.validateSchema('ClientError', { ...err, code: 42 })).not.toEqual([]);
    const full = { ...fileMini, created_at: '2012-12-12T10:53:43-08:00' };
    expect(v.validateSchema('File--Full', full)).toEqual([]);
    expect(v.validateSchema('File--Full', { ...full, created_at: 'yesterday' })).not.toEqual([]);
  });

  it('reads oneOf as a union, so an event whose source is a file passes (GenericSource overlaps File)', () => {
    const event = {
      type: 'event',
      event_id: 'f82c3ba03e41f7e8a7608363cc6c0390183c3f83',
      event_type: 'ITEM_CREATE',
      created_at: '2012-12-12T10:53:43-08:00',
      created_by: { type: 'user', id: '1', name: 'A', login: 'a@example.com' },
      session_id: '70090280850c8d2a1933c1',
      source: { ...fileMini, parent: { type: 'folder', id: '0', etag: null, sequence_id: null, name: 'All Files' } },
    };
    expect(v.validateSchema('Events', { chunk_size: 1, next_stream_position: '7', entries: [event] })).toEqual([]);
    expect(v.validateSchema('Events', { chunk_size: 1, next_stream_position: 7.5, entries: [event] })).not.toEqual([]);
  });

  it('follows $ref chains through allOf into nested objects', () => {
    const bad = { ...fileMini, file_version: { type: 'file_version' } };
    const errors = v.validateSchema('File--Mini', bad);
    expect(errors.join('\n')).toMatch(/file_version.*id/);
  });

  it('maps concrete paths to spec templates, preferring literal segments, and picks the status schema', () => {
    expect(v.operationFor('GET', '/2.0/folders/trash/items')).toBe('/folders/trash/items');
    expect(v.operationFor('GET', '/2.0/folders/123/items')).toBe('/folders/{folder_id}/items');
    expect(v.operationFor('PUT', '/api/2.0/files/upload_sessions/F00')).toBe('/files/upload_sessions/{upload_session_id}');
    expect(v.operationFor('POST', '/api/2.0/files/upload_sessions/F00/commit')).toBe('/files/upload_sessions/{upload_session_id}/commit');
    expect(v.operationFor('OPTIONS', '/2.0/files/content')).toBe('/files/content');
    expect(v.operationFor('PUT', '/2.0/files/9', 'add_shared_link')).toBe('/files/{file_id}#add_shared_link');
    expect(v.operationFor('PATCH', '/2.0/files/9')).toBeUndefined();
    expect(v.responseSchema('GET', '/files/{file_id}', 200)?.$ref).toBe('#/components/schemas/File--Full');
    expect(v.responseSchema('GET', '/files/{file_id}', 418)?.$ref).toBe('#/components/schemas/ClientError');
    expect(v.responseSchema('DELETE', '/files/{file_id}', 204)).toBeUndefined();
  });

  it('reports a status the spec does not document and an operation it does not have', () => {
    const r = v.validate({ method: 'GET', path: '/2.0/nope/1', status: 200, body: {} });
    expect(r.ok).toBe(false);
    expect(r.errors[0]).toMatch(/no operation/);
    const ok204 = v.validate({ method: 'DELETE', path: '/2.0/files/1', status: 204, body: undefined });
    expect(ok204.ok).toBe(true);
    expect(() => v.expectValid({ method: 'GET', path: '/2.0/files/1', status: 200, body: { type: 'file' } })).toThrow(/File--Full/);
  });
});
