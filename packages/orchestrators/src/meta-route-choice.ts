/**
 * How a `MetaRouter` makes a turn's choice of task type and pattern: with
 * its `choose` function, or with its model (a task type, then a pattern
 * when the type has several), falling back to the default pattern when the
 * choice fails.
 *
 * @module
 */
import { type Conversation, currentUserMessage, RequestContext, recordUsage } from '@switchboard/core';
import type { ChatClient } from '@switchboard/runtime';
import { routerConversation } from './llm-route-prompt.js';
import { askForStructuredAnswer } from './llm-structured-output.js';
import type { MetaRouteChoice, MetaRouteChooser } from './meta-route-options.js';
import type { MetaRouteSchema } from './meta-route-schema.js';
import type { RouteSetup } from './meta-route-setup.js';
import { type ChosenRoute, GENERAL_TASK, type TaskType } from './meta-route-view.js';

/** What a meta-router chooses with, fixed when it is made. */
export interface RouteChoosing {
  /** The pattern of the `general` task and of every fallback. */
  defaultPattern: string;
  choose?: MetaRouteChooser;
  /** The model's client (with a model and no `choose`). */
  client?: () => Promise<ChatClient>;
  model?: string;
  historyWindow: number;
  maxRetries: number;
  temperature?: number;
}

/** The default pattern for the `general` task, with what went wrong. */
function fallback(
  { defaultPattern }: RouteChoosing,
  problems: string[],
  chooser: ChosenRoute['chooser'],
): ChosenRoute {
  return { taskType: GENERAL_TASK, pattern: defaultPattern, chooser, fallback: true, problems };
}

/** The pattern of a type when none (or no valid one) was chosen. */
function defaultOf({ defaultPattern }: RouteChoosing, type: TaskType): string {
  return type.patterns.includes(defaultPattern) ? defaultPattern : type.patterns[0]!;
}

/** The turn's task type and pattern: from the `choose` function, the model, or the only ones there are. */
export async function makeChoice(
  choosing: RouteChoosing,
  conversation: Conversation,
  setup: RouteSetup,
): Promise<ChosenRoute> {
  if (choosing.choose) return chooseWith(choosing, choosing.choose, conversation, setup);
  const [only] = setup.taskTypes;
  if (setup.taskTypes.length === 1 && only && only.patterns.length === 1) {
    return { taskType: only.name, pattern: only.patterns[0]!, chooser: 'default' };
  }
  if (!choosing.client)
    return fallback(
      choosing,
      [
        'the configuration has several task types or patterns, and the router has no model or choose function',
      ],
      'default',
    );
  return chooseWithModel(choosing, conversation, setup);
}

/** The choice of the router's `choose` function, checked against the setup. */
async function chooseWith(
  choosing: RouteChoosing,
  choose: MetaRouteChooser,
  conversation: Conversation,
  setup: RouteSetup,
): Promise<ChosenRoute> {
  let choice: MetaRouteChoice;
  try {
    choice = await choose({
      conversation,
      message: currentUserMessage(conversation).content,
      taskTypes: setup.taskTypes,
      patterns: [...setup.patterns.values()].map(({ name, whenToUse, agentNames }) => ({
        name,
        whenToUse,
        agents: [...agentNames],
      })),
    });
  } catch (error) {
    return fallback(
      choosing,
      [`choose threw: ${error instanceof Error ? error.message : String(error)}`],
      'function',
    );
  }
  const type = setup.taskTypes.find((candidate) => candidate.name === choice?.taskType);
  if (!type)
    return fallback(
      choosing,
      [`choose returned the unknown task type '${String(choice?.taskType)}'`],
      'function',
    );
  const route: ChosenRoute = { taskType: type.name, pattern: defaultOf(choosing, type), chooser: 'function' };
  if (choice.pattern !== undefined && !type.patterns.includes(choice.pattern)) {
    route.fallback = true;
    route.problems = [
      `choose returned the pattern '${choice.pattern}', not valid for task type '${type.name}'`,
    ];
  } else if (choice.pattern !== undefined) route.pattern = choice.pattern;
  if (choice.rationale) route.rationale = choice.rationale;
  if (typeof choice.confidence === 'number') route.confidence = choice.confidence;
  return route;
}

/** The model's choice: a task type, then a pattern when the type has several. */
async function chooseWithModel(
  choosing: RouteChoosing,
  conversation: Conversation,
  setup: RouteSetup,
): Promise<ChosenRoute> {
  // Outside the try: a missing `openai` package is a configuration error, not a case for the fallback.
  const client = await choosing.client!();
  const history = routerConversation(conversation, choosing.historyWindow);
  const ask = async (schema: MetaRouteSchema) => {
    const answer = await askForStructuredAnswer({
      client,
      model: choosing.model!,
      temperature: choosing.temperature,
      messages: [{ role: 'system', content: schema.system }, ...history],
      responseFormat: schema.responseFormat,
      check: schema.check,
      maxRetries: choosing.maxRetries,
    });
    recordUsage(conversation, answer.usage);
    return answer;
  };
  try {
    const typeAnswer = await ask(setup.taskSchema!);
    const type = setup.taskTypes.find((candidate) => candidate.name === typeAnswer.value?.choice);
    if (!type) return fallback(choosing, typeAnswer.problems, 'model');
    const route: ChosenRoute = { taskType: type.name, pattern: type.patterns[0]!, chooser: 'model' };
    if (typeAnswer.value?.rationale) route.rationale = typeAnswer.value.rationale;
    if (typeAnswer.value?.confidence !== undefined) route.confidence = typeAnswer.value.confidence;
    const problems = [...typeAnswer.problems];
    const patternSchema = setup.patternSchemas.get(type.name);
    if (patternSchema) {
      const patternAnswer = await ask(patternSchema);
      problems.push(...patternAnswer.problems);
      if (patternAnswer.value) {
        route.pattern = patternAnswer.value.choice;
        if (patternAnswer.value.rationale) {
          route.rationale = [route.rationale, patternAnswer.value.rationale].filter(Boolean).join(' / ');
        }
      } else {
        route.pattern = defaultOf(choosing, type);
        route.fallback = true;
      }
    }
    if (problems.length > 0) route.problems = problems;
    return route;
  } catch (error) {
    if (RequestContext.tryCurrent()?.signal.aborted) throw error;
    return fallback(
      choosing,
      [`the model could not be reached: ${error instanceof Error ? error.message : String(error)}`],
      'model',
    );
  }
}
