/**
 * An UploadSessionStore in a JSON file, written synchronously and atomically on every change, so that a
 * process killed with SIGKILL leaves exactly what it had recorded (the journal's job in production).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { UploadSessionRecord, UploadSessionStore } from '../../../src/ports/remote-store.js';

export class FileSessionStore implements UploadSessionStore {
  constructor(private readonly path: string) {}

  private read(): Record<string, UploadSessionRecord> {
    try {
      return JSON.parse(readFileSync(this.path, 'utf8')) as Record<string, UploadSessionRecord>;
    } catch {
      return {};
    }
  }

  private write(all: Record<string, UploadSessionRecord>): void {
    writeFileSync(`${this.path}.tmp`, JSON.stringify(all));
    renameSync(`${this.path}.tmp`, this.path);
  }

  get(key: string): UploadSessionRecord | undefined {
    return this.read()[key];
  }
  put(rec: UploadSessionRecord): void {
    this.write({ ...this.read(), [rec.key]: rec });
  }
  addPart(key: string, part: UploadSessionRecord['parts'][number]): void {
    const all = this.read();
    const rec = all[key];
    if (rec) this.write({ ...all, [key]: { ...rec, parts: [...rec.parts, part] } });
  }
  delete(key: string): void {
    const all = this.read();
    delete all[key];
    this.write(all);
  }
  list(): readonly UploadSessionRecord[] {
    return Object.values(this.read());
  }
}
