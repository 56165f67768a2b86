import { runChild } from '../child.js';
import { switchboardSubject } from '../subjects/switchboard.js';

await runChild(switchboardSubject);
