/**
 * Talks to the example server with the official `openai` client, as any
 * OpenAI-compatible tool would. Start the server
 * (`pnpm --filter @switchboard/example-custom-orchestrator start`), then
 * `pnpm --filter @switchboard/example-custom-orchestrator client`.
 * `SWITCHBOARD_URL` (default `http://localhost:3000/v1`) says where it runs,
 * `SWITCHBOARD_API_KEY` the key to send when the server has API keys.
 *
 * @module
 */
import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: process.env.SWITCHBOARD_URL ?? 'http://localhost:3000/v1',
  apiKey: process.env.SWITCHBOARD_API_KEY ?? 'none', // any value while the server has no API keys
});

// The model is the app's orchestrator: GET /v1/models lists it.
const { data: completion, response } = await client.chat.completions
  .create({ model: 'custom-orchestrator', messages: [{ role: 'user', content: 'hello there' }] })
  .withResponse();
console.log(completion.choices[0]?.message.content);

// The server keeps the conversation: continue it with the session it returned, sending the new message.
const sessionId = response.headers.get('x-session-id') ?? '';
const stream = await client.chat.completions.create(
  {
    model: 'custom-orchestrator',
    messages: [{ role: 'user', content: 'please reverse stressed' }],
    stream: true,
    stream_options: { include_usage: true },
  },
  { headers: { 'x-session-id': sessionId } },
);
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? '');
process.stdout.write('\n');

// The Responses API: previous_response_id continues the session, no header needed.
const first = await client.responses.create({ model: 'custom-orchestrator', input: 'hello there' });
const second = await client.responses.create({
  model: 'custom-orchestrator',
  input: 'please reverse stressed',
  previous_response_id: first.id, // continues the session: no header needed
});
console.log(second.output_text);
