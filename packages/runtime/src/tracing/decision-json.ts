import type { ToolCall } from '@switchboard/core';
import { plainJson } from './span-attributes.js';

/** The parts of a `ToolCall` a decision span records; any of them may be missing from a hand-written orchestrator. */
export type CallSummary = Partial<Pick<ToolCall, 'id' | 'toolName' | 'message' | 'thought' | 'reason'>>;

/** What a decision span records about its candidates: the attribute value and the observation input per hop. */
export interface CandidateRecord {
  /** A private, frozen copy of the candidate names, shared by the spans of every turn. */
  readonly names: string[];
  /** `{"hop":<hop>,"candidates":[…]}`, indexed by hop. */
  readonly inputs: string[];
}

// Hops past this are rare (the default limit is 10) and are serialised each time.
const CACHED_HOPS = 32;

// Keyed by the engine's candidate array, which is the same for every turn of an app.
const records = new WeakMap<readonly string[], CandidateRecord>();

function sameNames(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
}

/**
 * The candidate names and the decision input for a decision span, computed
 * once per candidate list instead of once per decision. A list changed in
 * place since the last call is noticed and recorded afresh.
 */
export function candidateRecord(candidates: readonly string[]): CandidateRecord {
  const known = records.get(candidates);
  if (known && sameNames(known.names, candidates)) return known;
  const names = [...candidates];
  Object.freeze(names);
  const record: CandidateRecord = { names, inputs: [] };
  records.set(candidates, record);
  return record;
}

/** The observation input of decision `hop`: the hop and the candidate agents. */
export function decisionInput(record: CandidateRecord, hop: number): string {
  const cached = record.inputs[hop];
  if (cached !== undefined) return cached;
  const input = plainJson({ hop, candidates: record.names });
  if (Number.isInteger(hop) && hop >= 0 && hop < CACHED_HOPS) record.inputs[hop] = input;
  return input;
}

// Appends `"key":<value as JSON>`, omitting undefined values as JSON.stringify does for object members.
function member(json: string, key: string, value: unknown): string {
  const encoded = JSON.stringify(value);
  if (encoded === undefined) return json;
  return `${json}${json.length > 1 ? ',' : ''}"${key}":${encoded}`;
}

/**
 * The observation output of a decision: `{"kind":…,"calls":[{toolCallId,
 * agent, message, thought, reason}, …]}`, the same text `JSON.stringify`
 * gives for that object, built without the intermediate objects.
 */
export function decisionOutput(kind: string, calls: readonly CallSummary[]): string {
  try {
    let json = `{"kind":${JSON.stringify(kind)},"calls":[`;
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index] ?? {};
      let item = '{';
      item = member(item, 'toolCallId', call.id);
      item = member(item, 'agent', call.toolName);
      item = member(item, 'message', call.message);
      item = member(item, 'thought', call.thought);
      item = member(item, 'reason', call.reason);
      json += `${index > 0 ? ',' : ''}${item}}`;
    }
    return `${json}]}`;
  } catch {
    // A bigint or a cycle from a hand-written orchestrator: the safe serialiser copes.
    const summary = calls.map(({ id, toolName, message, thought, reason }) => ({
      toolCallId: id,
      agent: toolName,
      message,
      thought,
      reason,
    }));
    return plainJson({ kind, calls: summary });
  }
}
