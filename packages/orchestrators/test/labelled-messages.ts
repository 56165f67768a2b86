/**
 * A labelled set of user messages for measuring routing accuracy: what a user
 * of a six-agent assistant (calculator, unit converter, weather, clock,
 * translator, help) might type, each with the agent that should answer it.
 * `null` marks messages no agent handles, where the router should ask the user
 * to clarify. The messages were written before, and independently of, the
 * keyword and task configurations in `support/demo-agents.ts`.
 */
export interface LabelledMessage {
  message: string;
  /** The agent that should get the message, or `null` when none fits. */
  agent: string | null;
}

/** The labelled messages, grouped by agent. */
export const LABELLED_MESSAGES: readonly LabelledMessage[] = [
  { message: "What's 17 times 23?", agent: 'calculator' },
  { message: 'can you add up 45, 78 and 112 for me', agent: 'calculator' },
  { message: '15% of 240', agent: 'calculator' },
  { message: 'Calculate the square root of 144', agent: 'calculator' },
  { message: 'what is 1024 divided by 16', agent: 'calculator' },
  { message: 'I need to multiply 3.5 by 12', agent: 'calculator' },
  { message: '(12 + 8) * 3 - 4 = ?', agent: 'calculator' },
  { message: 'How much is 250 minus 37.5?', agent: 'calculator' },
  { message: "what's 2 to the power of 10", agent: 'calculator' },
  { message: 'Quick math: 19 * 7', agent: 'calculator' },
  { message: 'If I split a $84 bill between 4 people how much does each pay?', agent: 'calculator' },
  { message: 'sum of 3, 9, 27 and 81 please', agent: 'calculator' },

  { message: 'Convert 5 miles to kilometers', agent: 'converter' },
  { message: 'how many grams in a pound?', agent: 'converter' },
  { message: 'What is 72 degrees Fahrenheit in Celsius?', agent: 'converter' },
  { message: '10 km in miles', agent: 'converter' },
  { message: 'how many ounces are in 2 cups', agent: 'converter' },
  { message: "I'm 180 cm tall, what's that in feet and inches?", agent: 'converter' },
  { message: 'change 3 liters to gallons', agent: 'converter' },
  { message: 'convert 60 mph to km/h', agent: 'converter' },
  { message: 'how heavy is 75 kg in pounds', agent: 'converter' },
  { message: "what's 500 ml in fluid ounces", agent: 'converter' },
  { message: 'How many meters is 1000 feet?', agent: 'converter' },
  { message: '5 ft 10 in to centimeters please', agent: 'converter' },

  { message: "What's the weather like in Paris today?", agent: 'weather' },
  { message: 'Is it going to rain tomorrow in Seattle?', agent: 'weather' },
  { message: 'do I need an umbrella this afternoon', agent: 'weather' },
  { message: 'weather forecast for the weekend in Berlin', agent: 'weather' },
  { message: 'How hot will it be in Phoenix on Friday?', agent: 'weather' },
  { message: 'is it snowing in Denver right now', agent: 'weather' },
  { message: "what's the temperature outside in London", agent: 'weather' },
  { message: 'Will it be sunny in Barcelona next week?', agent: 'weather' },
  { message: 'how windy is it at the coast today', agent: 'weather' },
  { message: 'Any storms expected tonight in Miami?', agent: 'weather' },
  { message: "what's the humidity in Singapore", agent: 'weather' },
  { message: 'Should I wear a jacket tomorrow morning in Chicago?', agent: 'weather' },

  { message: 'What time is it?', agent: 'clock' },
  { message: "what's today's date", agent: 'clock' },
  { message: 'What day of the week is it today?', agent: 'clock' },
  { message: 'What time is it in Tokyo right now?', agent: 'clock' },
  { message: 'how many days until Christmas?', agent: 'clock' },
  { message: 'current time in New York please', agent: 'clock' },
  { message: 'Is it AM or PM in Sydney right now?', agent: 'clock' },
  { message: "what's the date next Friday", agent: 'clock' },
  { message: 'what year is it', agent: 'clock' },
  { message: 'time zone difference between London and LA', agent: 'clock' },
  { message: 'When is the next leap year?', agent: 'clock' },
  { message: 'how many hours between 9am and 5:30pm', agent: 'clock' },

  { message: "Translate 'good morning' into Spanish", agent: 'translator' },
  { message: 'How do you say thank you in Japanese?', agent: 'translator' },
  { message: "what does 'je ne sais quoi' mean in English", agent: 'translator' },
  { message: 'Can you translate this to German: where is the train station?', agent: 'translator' },
  { message: 'french for cheese', agent: 'translator' },
  { message: "How would I say 'I love you' in Italian?", agent: 'translator' },
  { message: 'translate hola to english', agent: 'translator' },
  { message: "What's the Portuguese word for apple?", agent: 'translator' },
  { message: "Please translate 'Happy birthday' into Korean", agent: 'translator' },
  { message: "how do I say 'the bill, please' in French", agent: 'translator' },
  { message: "what is 'danke schön' in English?", agent: 'translator' },
  { message: "Say 'see you tomorrow' in Mandarin", agent: 'translator' },

  { message: 'help', agent: 'help' },
  { message: 'What can you do?', agent: 'help' },
  { message: 'what are your features', agent: 'help' },
  { message: 'Hi! How does this work?', agent: 'help' },
  { message: "I'm new here, what kind of questions can I ask?", agent: 'help' },
  { message: 'show me a list of commands', agent: 'help' },
  { message: 'who are you?', agent: 'help' },
  { message: 'What are you able to help me with?', agent: 'help' },
  { message: 'hello', agent: 'help' },
  { message: 'Can you give me some examples of things to ask?', agent: 'help' },
  { message: 'what services do you offer', agent: 'help' },
  { message: 'how do I use this bot', agent: 'help' },

  { message: 'asdfgh', agent: null },
  { message: 'tell me a joke', agent: null },
  { message: 'Who won the football match last night?', agent: null },
  { message: 'order me a pizza', agent: null },
];

/**
 * Messages written after the configurations were frozen, to check that they
 * were not fitted to {@link LABELLED_MESSAGES}.
 */
export const HELD_OUT_MESSAGES: readonly LabelledMessage[] = [
  { message: 'what is 7 squared', agent: 'calculator' },
  { message: 'Can you work out a 12.5% tip on $68?', agent: 'calculator' },
  { message: 'average of 4, 8, 15 and 23', agent: 'calculator' },
  { message: '999 + 1', agent: 'calculator' },
  { message: 'how many tablespoons in a cup', agent: 'converter' },
  { message: "what's 30 celsius in fahrenheit", agent: 'converter' },
  { message: 'convert 2.5 kg to lbs', agent: 'converter' },
  { message: 'a marathon is 42.195 km, how many miles is that?', agent: 'converter' },
  { message: 'Is it cold in Oslo this week?', agent: 'weather' },
  { message: 'weather in Tokyo', agent: 'weather' },
  { message: 'will there be thunderstorms on Saturday?', agent: 'weather' },
  { message: "what's the forecast for tomorrow", agent: 'weather' },
  { message: "what's the time in Paris", agent: 'clock' },
  { message: 'which day is it today', agent: 'clock' },
  { message: 'how many weeks until my birthday on June 3?', agent: 'clock' },
  { message: "What's the current date and time in UTC?", agent: 'clock' },
  { message: "translate 'where is the bathroom' to French", agent: 'translator' },
  { message: "What's 'butterfly' in German?", agent: 'translator' },
  { message: 'how do you say goodbye in Korean', agent: 'translator' },
  { message: 'Translate this sentence into Spanish: I am hungry', agent: 'translator' },
  { message: 'hey, what can you help with?', agent: 'help' },
  { message: 'help me understand what this assistant does', agent: 'help' },
  { message: 'what commands are there', agent: 'help' },
  { message: 'Hi there', agent: 'help' },
  { message: 'write me a poem about the sea', agent: null },
  { message: 'book a table for two at 8', agent: null },
];
