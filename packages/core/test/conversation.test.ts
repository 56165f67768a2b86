import { currentUserMessage, lastMessage, latestToolResults, turnMessages } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { assistantMessage, conversationOf, toolMessage, userMessage } from './fixtures.js';

/** Two earlier turns (the second ended with an agent error) and the current turn's user message. */
function historyThenNewTurn() {
  const history = [
    userMessage('what is 2+2'),
    toolMessage('calculator', '4'),
    assistantMessage('4'),
    userMessage('time in Tokyo'),
    toolMessage('clock', 'clock crashed', 'error'),
  ];
  const current = userMessage('convert 5 km to miles');
  return { history, current, conversation: conversationOf([...history, current]) };
}

describe('currentUserMessage', () => {
  it('returns the message that started the current turn, not an earlier one', () => {
    const { current, conversation } = historyThenNewTurn();
    expect(currentUserMessage(conversation)).toBe(current);
  });

  it('still finds it after agents have replied in this turn', () => {
    const { current, history } = historyThenNewTurn();
    const conversation = conversationOf([...history, current, toolMessage('converter', '3.107 mi')], {
      hop: 1,
    });
    expect(currentUserMessage(conversation).content).toBe('convert 5 km to miles');
  });

  it('throws a clear error when turnStart does not point at a user message', () => {
    const conversation = conversationOf([userMessage('hi'), toolMessage('clock', 'noon')], { turnStart: 1 });
    expect(() => currentUserMessage(conversation)).toThrow(
      'conversation.turnStart does not point at a user message',
    );
    const outOfRange = conversationOf([userMessage('hi')], { turnStart: 5 });
    expect(() => currentUserMessage(outOfRange)).toThrow(/turnStart/);
  });
});

describe('lastMessage', () => {
  it('returns the user message on the first hop and the latest reply later', () => {
    const user = userMessage('hi');
    expect(lastMessage(conversationOf([user]))).toBe(user);
    const reply = toolMessage('clock', 'noon');
    expect(lastMessage(conversationOf([user, reply]))).toBe(reply);
  });

  it('returns undefined for an empty conversation', () => {
    expect(lastMessage(conversationOf([], { turnStart: 0 }))).toBeUndefined();
  });
});

describe('latestToolResults', () => {
  it('is empty on the first hop, even when the previous turn ended with an agent reply', () => {
    const { conversation } = historyThenNewTurn();
    expect(latestToolResults(conversation)).toEqual([]);
  });

  it('returns the single reply after one agent call', () => {
    const { history, current } = historyThenNewTurn();
    const reply = toolMessage('converter', '3.107 mi');
    expect(latestToolResults(conversationOf([...history, current, reply]))).toEqual([reply]);
  });

  it('returns every reply of a fan-out, in call order, errors included', () => {
    const user = userMessage('time and 2+2 and 1 km in m');
    const replies = [
      toolMessage('clock', '12:00'),
      toolMessage('calculator', 'division by zero', 'error'),
      toolMessage('converter', '1000 m'),
    ];
    const results = latestToolResults(conversationOf([user, ...replies], { hop: 1 }));
    expect(results).toEqual(replies);
    expect(results.map((message) => message.name)).toEqual(['clock', 'calculator', 'converter']);
  });

  it('returns the runtime-provided results of the previous decision when present', () => {
    // A chain A → B: both replies trail the turn, but only B answered the previous decision.
    const user = userMessage('what day is it in 10 days');
    const fromClock = toolMessage('clock', 'Monday');
    const fromCalculator = toolMessage('calculator', '42');
    const conversation = conversationOf([user, fromClock, fromCalculator], {
      hop: 2,
      lastResults: [fromCalculator],
    });
    expect(latestToolResults(conversation)).toEqual([fromCalculator]);
    expect(latestToolResults(conversationOf([user], { lastResults: [] }))).toEqual([]);
  });

  it('falls back to the trailing tool messages of the turn for a hand-built conversation', () => {
    const user = userMessage('chain');
    const replies = [toolMessage('clock', 'Monday'), toolMessage('calculator', '42')];
    expect(latestToolResults(conversationOf([user, ...replies], { hop: 2 }))).toEqual(replies);
  });
});

describe('turnMessages', () => {
  it('returns the current turn only, starting with its user message', () => {
    const { history, current } = historyThenNewTurn();
    const reply = toolMessage('converter', '3.107 mi');
    const turn = turnMessages(conversationOf([...history, current, reply]));
    expect(turn).toEqual([current, reply]);
  });

  it('returns the whole conversation when the turn is the first one', () => {
    const messages = [userMessage('hi'), toolMessage('clock', 'noon')];
    expect(turnMessages(conversationOf(messages))).toEqual(messages);
  });
});
