/**
 * The refusals of the config API that are not a bad item (a bad item is a
 * `ValidationError` listing the schema's issues).
 *
 * @module
 */
import { UserError } from '@switchboard/core';

/** The item changed since the version the edit was based on (409 `version_conflict`, with the current version). */
export class ConfigVersionConflictError extends UserError {
  readonly code = 'version_conflict';
  readonly currentVersion: number;
  constructor({
    type,
    name,
    expected,
    currentVersion,
  }: { type: string; name: string; expected: number; currentVersion: number }) {
    super({
      message:
        expected === 0
          ? `Config item ${type}/${name} already exists (version ${currentVersion}); send its version to change it`
          : `Config item ${type}/${name} is at version ${currentVersion}, not ${expected}: read it again and retry`,
    });
    this.currentVersion = currentVersion;
  }
}
