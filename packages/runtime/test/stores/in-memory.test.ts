import { InMemoryMemoryStore } from '../../src/stores/in-memory-memory-store.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import { describeMemoryStoreContract } from './memory-store.contract.js';
import { describeSessionStoreContract } from './session-store.contract.js';

describeSessionStoreContract(
  'in-memory',
  ({ idleTtlSeconds }) => new InMemorySessionStore({ idleTtlSeconds }),
);
describeMemoryStoreContract('in-memory', () => new InMemoryMemoryStore());
