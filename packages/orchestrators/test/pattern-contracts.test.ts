import { ConsensusOrchestrator, SequentialOrchestrator } from '../src/index.js';
import { describeRouterContract } from './router-contract.js';

const agents = ['draft', 'review', 'publish'].map((name) => ({ name, description: `The ${name} agent` }));

// Patterns whose every turn starts with the same agents: the contract checks they start afresh each turn,
// answer with the agents' replies, fail clearly, and never call an agent outside the candidates.
describeRouterContract('SequentialOrchestrator', () => ({
  orchestrator: new SequentialOrchestrator({ agents }),
  routing: { fixed: ['draft'] },
}));

describeRouterContract('ConsensusOrchestrator', () => ({
  orchestrator: new ConsensusOrchestrator({ agents }),
  routing: { fixed: ['draft', 'review', 'publish'] },
}));
