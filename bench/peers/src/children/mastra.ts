import { runChild } from '../child.js';
import { mastraSubject } from '../subjects/mastra.js';

await runChild(mastraSubject);
