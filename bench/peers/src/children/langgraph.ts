import { runChild } from '../child.js';
import { langGraphSubject } from '../subjects/langgraph.js';

await runChild(langGraphSubject);
