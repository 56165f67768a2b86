import { UserError } from './user-error.js';

/** Input that failed validation. `issues` lists what is wrong, one line each. */
export class ValidationError extends UserError {
  readonly code = 'validation_error';
  readonly issues: readonly string[];
  constructor({
    message = 'Invalid input',
    issues = [],
    cause,
  }: { message?: string; issues?: readonly string[]; cause?: unknown }) {
    super({ message: issues.length ? `${message}: ${issues.join('; ')}` : message, cause });
    this.issues = issues;
  }
}
