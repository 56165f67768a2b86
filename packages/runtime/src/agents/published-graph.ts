import type { Orchestrator } from '@switchboard/core';
import { z } from 'zod';

/** Schema of the workflow graph an orchestrator publishes (see {@link PublishesGraph}). */
export const PublishedGraphSchema = z.object({
  name: z.string(),
  entry: z.string(),
  nodes: z.array(
    z.object({
      name: z.string(),
      kind: z.enum(['function', 'agent', 'orchestrator', 'input']),
      description: z.string().optional(),
      approval: z.boolean().optional(),
    }),
  ),
  /** `conditional` edges are the targets a route may pick. */
  edges: z.array(z.object({ from: z.string(), to: z.string(), conditional: z.boolean().optional() })),
  /** The graph as a Mermaid flowchart (node ids `n_<name>`, `-` as `_`). */
  mermaid: z.string(),
});

/** A workflow graph as clients see it on `GET /v1/agents`. */
export type PublishedGraph = z.infer<typeof PublishedGraphSchema>;

/**
 * An optional capability of an orchestrator: the workflow graph it runs,
 * which the app publishes on `GET /v1/agents` (`graph`) and the console
 * draws, highlighting the nodes a turn's steps name (`graphNodes`).
 */
export interface PublishesGraph {
  readonly view: PublishedGraph;
}

/** True when the orchestrator publishes a graph (see {@link PublishesGraph}). */
export function publishesGraph(orchestrator: Orchestrator): orchestrator is Orchestrator & PublishesGraph {
  const view = (orchestrator as Partial<PublishesGraph>).view;
  return typeof view === 'object' && view !== null && typeof view.mermaid === 'string';
}
