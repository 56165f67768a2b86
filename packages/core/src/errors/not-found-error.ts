import { UserError } from './user-error.js';

/** A resource (a session, an approval) that does not exist. */
export class NotFoundError extends UserError {
  readonly code = 'not_found';
  constructor({ resource, id }: { resource: string; id: string }) {
    super({ message: `${resource} '${id}' was not found` });
  }
}
