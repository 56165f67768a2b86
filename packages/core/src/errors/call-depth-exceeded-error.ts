import { UserError } from './user-error.js';

/**
 * A request from another Switchboard server (its `remoteAgent`) that is
 * already as deep as servers may call each other (`x-switchboard-depth` over
 * the app's `maxCallDepth`): refused before any turn runs, so that servers
 * calling each other in a loop stop.
 */
export class CallDepthExceededError extends UserError {
  readonly code = 'nesting_depth_exceeded';
  readonly depth: number;
  readonly maxDepth: number;
  constructor({ depth, maxDepth }: { depth: number; maxDepth: number }) {
    super({
      message: `This request is ${depth} calls deep through other Switchboard servers; the limit is ${maxDepth} (maxCallDepth)`,
    });
    this.depth = depth;
    this.maxDepth = maxDepth;
  }
}
