import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpToolError } from './mcp-errors.js';

type ContentBlock = CallToolResult['content'][number];

/** One content block as text for the model; binary content is described, not sent. */
function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes]`;
    case 'resource_link':
      return `[resource ${block.uri}${block.description ? `: ${block.description}` : ''}]`;
    case 'resource': {
      const { resource } = block;
      return 'text' in resource && typeof resource.text === 'string'
        ? resource.text
        : `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]`;
    }
    default:
      return '';
  }
}

function bounded(text: string, maxChars: number): string {
  return text.length <= maxChars
    ? text
    : `${text.slice(0, maxChars)}… [cut: ${text.length - maxChars} more characters]`;
}

/**
 * What the model is told of an MCP tool's result: its text content, then its
 * structured content as JSON unless a text block already is that JSON. An
 * `isError` result throws {@link McpToolError} with its text, which the
 * model then sees as the tool's error. At most `maxChars` characters.
 */
export function resultText(tool: string, result: CallToolResult, maxChars: number): string {
  const texts = (Array.isArray(result.content) ? result.content : [])
    .map(blockText)
    .filter((text) => text !== '');
  if (result.isError) {
    throw new McpToolError({ tool, message: bounded(texts.join('\n') || 'the tool failed', maxChars) });
  }
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (!texts.some((text) => text.trim() === json || safeEquals(text, result.structuredContent)))
      texts.push(json);
  }
  return bounded(texts.join('\n') || '(no content)', maxChars);
}

/** True when the text is JSON equal to the value (as servers serialise structured content in a text block). */
function safeEquals(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
