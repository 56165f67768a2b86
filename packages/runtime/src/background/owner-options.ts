/** Whose background turns or schedules a call reads or changes. */
export interface OwnerOptions {
  /** The tenant's (an API key's tenant); leave it out in an app without tenants. */
  tenantId?: string;
  /** Only this user's (a user-bound key's); without it, the whole tenant's. */
  userId?: string;
}

/**
 * The owner a method was given, in its options or in the deprecated
 * positional form `(…, tenantId, userId?)` it keeps for one minor version.
 */
export function ownerOf(
  options: OwnerOptions | string | undefined,
  userId: string | undefined,
): OwnerOptions {
  if (typeof options === 'object' && options !== null) return options;
  return { tenantId: options, userId };
}
