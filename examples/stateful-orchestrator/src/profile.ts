import { type MemoryResult, RequestContext } from '@switchboard/core';
import { z } from 'zod';

/** The unit systems the user can prefer. */
export const UnitsSchema = z.enum(['metric', 'imperial']);

/** A unit system: `metric` (°C) or `imperial` (°F). */
export type Units = z.infer<typeof UnitsSchema>;

/** What the onboarding flow remembers about the person it talks to. */
export interface Profile {
  /** The name given in this session (session memory). */
  name?: string;
  /** The preferred units, kept across this user's sessions (user memory). */
  units?: Units;
  /** How many messages this session has had, the current one included (session memory). */
  turns: number;
  /** How many sessions this user has started (user memory). */
  conversations: number;
}

// Memory keys, one place so the orchestrator and the docs agree.
const NAME = 'name';
const TURNS = 'turns';
const UNITS = 'units';
const CONVERSATIONS = 'conversations';

/** Memory answers with values, not throws; an outage becomes a throw here, which fails the turn cleanly. */
function unwrap<T>(result: MemoryResult<T>): T {
  if (!result.success) throw result.error;
  return result.data;
}

const sessionMemory = () => RequestContext.current().getMemory('session');
const userMemory = () => RequestContext.current().getMemory('user');

/**
 * Counts the current message: increments the session's `turns` atomically
 * and, on a session's first message, the user's `conversations`. Call once
 * per turn (on hop 0).
 */
export async function countMessage(): Promise<void> {
  const turns = unwrap(await sessionMemory().updateContent(TURNS, (count: number) => count + 1, 0));
  if (turns === 1) unwrap(await userMemory().updateContent(CONVERSATIONS, (count: number) => count + 1, 0));
}

/** Reads the profile from session and user memory; a value of the wrong shape counts as absent. */
export async function readProfile(): Promise<Profile> {
  const [name, units, turns, conversations] = await Promise.all([
    sessionMemory().getContent<unknown>(NAME),
    userMemory().getContent<unknown>(UNITS),
    sessionMemory().getContent<unknown>(TURNS, 0),
    userMemory().getContent<unknown>(CONVERSATIONS, 0),
  ]);
  const profile: Profile = {
    turns: z.number().catch(0).parse(unwrap(turns)),
    conversations: z.number().catch(0).parse(unwrap(conversations)),
  };
  const parsedName = z.string().min(1).safeParse(unwrap(name));
  if (parsedName.success) profile.name = parsedName.data;
  const parsedUnits = UnitsSchema.safeParse(unwrap(units));
  if (parsedUnits.success) profile.units = parsedUnits.data;
  return profile;
}

/** Remembers the user's name for this session only. */
export async function rememberName(name: string): Promise<void> {
  unwrap(await sessionMemory().setContent(NAME, name));
}

/** Remembers the preferred units for this user, across sessions (for this session when there is no user id). */
export async function rememberUnits(units: Units): Promise<void> {
  unwrap(await userMemory().setContent(UNITS, units));
}
