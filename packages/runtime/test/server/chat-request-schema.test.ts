import { describe, expect, it } from 'vitest';
import { chatRequestSchema, commonChatRequest } from '../../src/server/schemas.js';

const MAX = 12;
const schema = chatRequestSchema(MAX);

/** Bodies as a client sends them (parsed JSON), at and past every bound the quick check reads. */
const bodies: Array<[string, string]> = [
  ['a message', '{"message":"hello"}'],
  ['a message and session', '{"message":"hello","sessionId":"ses_1.a:b-c"}'],
  ['with stream', '{"message":"hello","sessionId":"s","stream":true}'],
  ['stream false', '{"stream":false,"message":"hello"}'],
  ['the longest message', `{"message":"${'x'.repeat(MAX)}"}`],
  ['a message one too long', `{"message":"${'x'.repeat(MAX + 1)}"}`],
  ['an empty message', '{"message":""}'],
  ['no message', '{"sessionId":"s"}'],
  ['a number for message', '{"message":7}'],
  ['a null message', '{"message":null}'],
  ['a session of .', '{"message":"hi","sessionId":"."}'],
  ['a session of ..', '{"message":"hi","sessionId":".."}'],
  ['a session of ...', '{"message":"hi","sessionId":"..."}'],
  ['the longest session', `{"message":"hi","sessionId":"${'s'.repeat(128)}"}`],
  ['a session one too long', `{"message":"hi","sessionId":"${'s'.repeat(129)}"}`],
  ['a session with a slash', '{"message":"hi","sessionId":"a/b"}'],
  ['an empty session', '{"message":"hi","sessionId":""}'],
  ['a null session', '{"message":"hi","sessionId":null}'],
  ['a string for stream', '{"message":"hi","stream":"yes"}'],
  ['an unknown field', '{"message":"hi","colour":"red"}'],
  ['a __proto__ field', '{"message":"hi","__proto__":{"stream":true}}'],
  ['a userId', '{"message":"hi","userId":"u-1"}'],
  ['metadata', '{"message":"hi","metadata":{"a":1}}'],
  ['background', '{"message":"hi","background":true}'],
  ['an array', '[{"message":"hi"}]'],
  ['a string', '"hi"'],
  ['null', 'null'],
];

describe("the quick check of /v1/chat's common body", () => {
  it.each(bodies)('agrees with the schema: %s', (_, text) => {
    const quick = commonChatRequest(JSON.parse(text), MAX);
    const parsed = schema.safeParse(JSON.parse(text));
    // It answers only for bodies the schema accepts, with what the schema returns; any other goes to the schema.
    if (quick !== undefined) {
      expect(parsed.success).toBe(true);
      expect(quick).toEqual(parsed.data);
    }
  });

  it('answers for the bodies clients send most', () => {
    for (const text of bodies.slice(0, 5).map(([, body]) => body))
      expect(commonChatRequest(JSON.parse(text), MAX)).toBeDefined();
  });
});
