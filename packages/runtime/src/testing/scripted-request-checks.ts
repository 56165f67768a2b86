/**
 * Checks a chat-completions request the way an OpenAI-compatible server would
 * reject it, so a test catches a request the real API would refuse with 400
 * (a tool result without its tool call, a strict schema that is not strict).
 */

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

function checkMessages(messages: unknown, problems: string[]): void {
  if (!Array.isArray(messages) || messages.length === 0) {
    problems.push("'messages' must be a non-empty array");
    return;
  }
  const pendingToolCalls = new Set<string>();
  messages.forEach((message, index) => {
    if (!isObject(message) || typeof message.role !== 'string' || !ROLES.has(message.role)) {
      problems.push(`messages[${index}] needs a valid 'role'`);
      return;
    }
    if (message.role === 'assistant' && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        if (isObject(call) && typeof call.id === 'string') pendingToolCalls.add(call.id);
        else problems.push(`messages[${index}].tool_calls holds a call without an id`);
      }
    }
    if (message.role === 'tool') {
      const id = message.tool_call_id;
      if (typeof id !== 'string' || !pendingToolCalls.has(id)) {
        problems.push(
          `messages[${index}] is a tool result for '${String(id)}', which no earlier assistant message called`,
        );
      }
      if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
        problems.push(`messages[${index}] (tool) needs 'content'`);
      }
    }
  });
}

/**
 * The strict structured-output rules: every object lists all its properties
 * in `required` and sets `additionalProperties: false`.
 */
function checkStrictSchema(schema: unknown, path: string, problems: string[]): void {
  if (!isObject(schema)) return;
  if (schema.type === 'object' || isObject(schema.properties)) {
    const properties = isObject(schema.properties) ? Object.keys(schema.properties) : [];
    const required = Array.isArray(schema.required) ? schema.required : [];
    const missing = properties.filter((name) => !required.includes(name));
    if (missing.length > 0)
      problems.push(`${path}: strict schemas must require every property (missing: ${missing.join(', ')})`);
    if (schema.additionalProperties !== false)
      problems.push(`${path}: strict schemas need additionalProperties: false`);
    for (const name of properties) {
      checkStrictSchema((schema.properties as JsonObject)[name], `${path}.properties.${name}`, problems);
    }
  }
  if (isObject(schema.items)) checkStrictSchema(schema.items, `${path}.items`, problems);
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const variants = schema[keyword];
    if (!Array.isArray(variants)) continue;
    for (const [i, variant] of variants.entries())
      checkStrictSchema(variant, `${path}.${keyword}[${i}]`, problems);
  }
  if (Array.isArray(schema.enum) && schema.enum.length === 0)
    problems.push(`${path}: enum must not be empty`);
}

function checkResponseFormat(format: unknown, problems: string[]): void {
  if (format === undefined || format === null) return;
  if (!isObject(format) || typeof format.type !== 'string') {
    problems.push("'response_format' must be an object with a 'type'");
    return;
  }
  if (format.type !== 'json_schema') return;
  const jsonSchema = format.json_schema;
  if (
    !isObject(jsonSchema) ||
    typeof jsonSchema.name !== 'string' ||
    !/^[A-Za-z0-9_-]{1,64}$/.test(jsonSchema.name)
  ) {
    problems.push("'response_format.json_schema' needs a 'name' of letters, digits, _ and -");
    return;
  }
  if (jsonSchema.strict === true)
    checkStrictSchema(jsonSchema.schema, 'response_format.json_schema.schema', problems);
}

function checkTools(tools: unknown, problems: string[]): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) {
    problems.push("'tools' must be an array");
    return;
  }
  const names = new Set<string>();
  tools.forEach((tool, index) => {
    const fn = isObject(tool) ? tool.function : undefined;
    if (!isObject(tool) || tool.type !== 'function' || !isObject(fn) || typeof fn.name !== 'string') {
      problems.push(`tools[${index}] must be { type: 'function', function: { name, … } }`);
      return;
    }
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(fn.name))
      problems.push(`tools[${index}].function.name '${fn.name}' is invalid`);
    if (names.has(fn.name)) problems.push(`tools[${index}]: duplicate function name '${fn.name}'`);
    names.add(fn.name);
    if (fn.parameters !== undefined && (!isObject(fn.parameters) || fn.parameters.type !== 'object')) {
      problems.push(`tools[${index}].function.parameters must be a JSON schema of type 'object'`);
    }
    if (fn.strict === true) checkStrictSchema(fn.parameters, `tools[${index}].function.parameters`, problems);
  });
}

/**
 * Lists why an OpenAI-compatible server would reject `body` with 400; empty when it is acceptable.
 *
 * @example
 * ```ts
 * checkChatRequest({ model: 'm', messages: [] }); // ["'messages' must be a non-empty array"]
 * ```
 */
export function checkChatRequest(body: unknown): string[] {
  if (!isObject(body)) return ['the body must be a JSON object'];
  const problems: string[] = [];
  if (typeof body.model !== 'string' || body.model === '')
    problems.push("'model' must be a non-empty string");
  checkMessages(body.messages, problems);
  checkResponseFormat(body.response_format, problems);
  checkTools(body.tools, problems);
  if (body.stream_options !== undefined && body.stream !== true) {
    problems.push("'stream_options' is only allowed when 'stream' is true");
  }
  return problems;
}
