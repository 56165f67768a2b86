import { defineAgent } from '@switchboard/runtime';

/** Greets the user. */
export const greeter = defineAgent({
  name: 'greeter',
  description: 'Says hello',
  keywords: ['hello', 'hi'],
  run: () => 'Hello! Nice to meet you.',
});

/** Reverses the text after the word "reverse", streaming it one word at a time. */
export const reverser = defineAgent({
  name: 'reverser',
  description: 'Reverses text',
  keywords: ['reverse'],
  async *run(message) {
    const text = message.replace(/^.*?reverse\s*/i, '');
    const words = [...text].reverse().join('').split(/(\s+)/);
    for (const word of words) yield word;
  },
});
