/**
 * Streaming multipart receiver for direct uploads. The `attributes` part must arrive before the file part
 * (else 400 metadata_after_file_contents, as on Box). For a new version it may be left out altogether
 * (`attributesOptional`: the file keeps its name, as on Box); an attributes part after the file part is still
 * refused there. Attributes are validated as soon as they arrive, so a bad
 * name or a conflict is known before any byte is stored. The file part streams into a blob while its SHA-1 is
 * computed; the rest of the request is always drained so the client sees the error instead of a broken pipe.
 */
import busboy from 'busboy';
import { BoxError } from './box-error.js';
import type { StoredBlob } from './blob-store.js';
import type { Ctx } from './http-context.js';

export interface MultipartUpload {
  readonly attributes: Record<string, unknown>;
  readonly blob: StoredBlob;
}

export function receiveMultipart(
  ctx: Ctx,
  validate: (attributes: Record<string, unknown>) => void,
  maxBytes: number,
  opts: { attributesOptional?: boolean } = {},
): Promise<MultipartUpload> {
  const blobs = ctx.core.store.blobs;
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: ctx.req.headers, limits: { fieldSize: 1024 * 1024, files: 1, fields: 10 } });
    } catch {
      ctx.req.resume();
      reject(new BoxError(400, 'bad_request', 'Content-Type must be multipart/form-data with an attributes part and a file part; nothing was stored'));
      return;
    }
    let attributes: Record<string, unknown> | undefined;
    let failure: unknown = null;
    let pending: Promise<StoredBlob | null> | null = null;
    /** The file part came first (allowed only with attributesOptional): a later attributes part is refused. */
    let fileFirst = false;
    const fail = (e: unknown): void => {
      failure ??= e;
    };
    bb.on('field', (name, value) => {
      if (name !== 'attributes' || failure) return;
      if (fileFirst) {
        fail(new BoxError(400, 'metadata_after_file_contents', 'The attributes part must come before the file part; nothing was stored'));
        return;
      }
      try {
        const parsed: unknown = JSON.parse(value);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        attributes = parsed as Record<string, unknown>;
        validate(attributes);
      } catch (e) {
        fail(e instanceof BoxError ? e : new BoxError(400, 'bad_request', 'The attributes part must be a JSON object; nothing was stored'));
      }
    });
    bb.on('file', (_name, stream) => {
      if (failure || pending) {
        stream.resume();
        return;
      }
      if (!attributes && opts.attributesOptional) {
        fileFirst = true;
        attributes = {};
        try {
          validate(attributes);
        } catch (e) {
          fail(e);
          stream.resume();
          return;
        }
      }
      if (!attributes) {
        fail(new BoxError(400, 'metadata_after_file_contents', 'The attributes part must come before the file part; nothing was stored'));
        stream.resume();
        return;
      }
      const tooBig = (): Error => new BoxError(403, 'file_size_limit_exceeded', `File is larger than the maximum upload size ${maxBytes}; nothing was stored`);
      pending = blobs.writeFrom(stream, maxBytes, tooBig).catch((e: unknown) => {
        fail(e);
        stream.resume();
        return null;
      });
    });
    bb.on('error', () => {
      fail(new BoxError(400, 'bad_request', 'Malformed multipart body; nothing was stored'));
      ctx.req.resume();
      void finish();
    });
    let finished = false;
    const finish = async (): Promise<void> => {
      if (finished) return;
      finished = true;
      const blob = pending ? await pending : null;
      if (failure || !blob || !attributes) {
        if (blob) blobs.remove(blob.blobId);
        reject(failure ?? new BoxError(400, 'bad_request', 'The request has no file part; nothing was stored'));
        return;
      }
      resolve({ attributes, blob });
    };
    bb.on('close', () => void finish());
    ctx.req.pipe(bb);
  });
}
