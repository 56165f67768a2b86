import { SystemError } from './system-error.js';

/** A persisted record could not be read: bad JSON, a failed schema check, an unknown schema version. */
export class CorruptRecordError extends SystemError {
  readonly code = 'corrupt_record';
  constructor({ key, detail, cause }: { key: string; detail: string; cause?: unknown }) {
    super({ message: `Stored record '${key}' is corrupt: ${detail}`, cause });
  }
}
