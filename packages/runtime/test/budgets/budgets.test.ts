import { readFileSync } from 'node:fs';
import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { App } from '../../src/app.js';
import { type BudgetOptions, checkBudgetOptions } from '../../src/budgets/budget-options.js';
import { apiKeys } from '../../src/server/auth.js';
import { UsageReportSchema } from '../../src/server/usage-openapi.js';
import { parseSamples } from '../support/prometheus-text.js';
import { useSpanRecording } from '../support/span-recording.js';
import { ACME_KEY, bearer, GLOBEX_KEY } from '../support/two-tenants.js';
import { budgetApp, spending } from './budget-fixtures.js';

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

describe('a turn budget', () => {
  const spans = useSpanRecording();

  it('ends a turn budget_exceeded before the model call that could pass 1,000 tokens, with the partial answer and a budget note', async () => {
    // The first call spends 700 tokens; the second may spend its input estimate plus max_tokens (300): past 1,000.
    const { app, server, close } = await budgetApp([spending('First draft.', 600, 100)], {
      budgets: { turn: { totalTokens: 1000 } },
    });
    try {
      const result = await app.chat({ message: 'a poem please' });
      expect(result.status).toBe('budget_exceeded');
      expect(server.requests).toHaveLength(1);
      expect(result.error?.code).toBe('budget_exceeded');
      expect(result.reply).toContain('First draft.');
      expect(result.reply).toContain('spending limit');
      const note = result.steps.find((step) => step.kind === 'note' && step.label === 'budget');
      expect(note?.annotations).toMatchObject({ scope: 'turn', limit: 'totalTokens', max: 1000, used: 700 });
      expect(Number(note?.annotations?.requested)).toBeGreaterThan(300);
      const turnSpan = spans().spans.find(
        (span) => span.attributes['switchboard.turn.status'] === 'budget_exceeded',
      );
      expect(turnSpan?.attributes['switchboard.budget.exceeded']).toBe('turn.totalTokens');
      // Stored as it ended: the session shows the status and the partial answer.
      const session = (await (await app.request(`/v1/sessions/${result.sessionId}`)).json()) as {
        turns: Array<{ status: string }>;
        messages: Array<{ role: string; content: string }>;
      };
      expect(session.turns.at(-1)?.status).toBe('budget_exceeded');
      expect(session.messages.at(-1)).toMatchObject({ role: 'assistant', content: result.reply });
    } finally {
      await close();
    }
  });

  it('lets the same turn finish under a budget it fits in', async () => {
    const { app, server, close } = await budgetApp(
      [spending('First draft.', 600, 100), spending('Polished.', 100, 50)],
      { budgets: { turn: { totalTokens: 2000 } } },
    );
    try {
      const result = await app.chat({ message: 'a poem please' });
      expect(result.status).toBe('completed');
      expect(result.reply).toBe('Polished.');
      expect(server.requests).toHaveLength(2);
    } finally {
      await close();
    }
  });

  it('stops at a cost limit priced from the price table, and reports the cost spent', async () => {
    // 600 in at 1 and 100 out at 2 per million: 0.0008; the next call may cost 300 × 2 per million and more.
    const { app, server, close } = await budgetApp([spending('First draft.', 600, 100)], {
      budgets: { turn: { cost: 0.001 }, prices: { 'poet-1': { input: 1, output: 2 } } },
    });
    try {
      const result = await app.chat({ message: 'a poem please' });
      expect(result.status).toBe('budget_exceeded');
      expect(server.requests).toHaveLength(1);
      const note = result.steps.find((step) => step.label === 'budget');
      expect(note?.annotations).toMatchObject({ scope: 'turn', limit: 'cost', max: 0.001 });
      expect(Number(note?.annotations?.used)).toBeCloseTo(0.0008, 9);
      const usage = (await (await app.request(`/v1/usage?sessionId=${result.sessionId}`)).json()) as {
        tenant: { day: { used: { cost: number; totalTokens: number } } };
        session: { used: { cost: number; inputTokens: number; outputTokens: number } };
        turnLimits: { cost: number };
      };
      expect(usage.tenant.day.used.cost).toBeCloseTo(0.0008, 9);
      expect(usage.tenant.day.used.totalTokens).toBe(700);
      expect(usage.session.used).toMatchObject({ inputTokens: 600, outputTokens: 100 });
      expect(usage.turnLimits).toEqual({ cost: 0.001 });
    } finally {
      await close();
    }
  });

  it('maps budget_exceeded to finish_reason length on chat completions and to incomplete (max_output_tokens) on responses', async () => {
    const { app, close } = await budgetApp(
      [spending('First draft.', 600, 100), spending('Second draft.', 600, 100)],
      { budgets: { turn: { totalTokens: 1000 } } },
    );
    try {
      const completion = (await (
        await app.request(
          '/v1/chat/completions',
          json({ model: 'budgets', messages: [{ role: 'user', content: 'hi' }] }),
        )
      ).json()) as {
        choices: Array<{ finish_reason: string; message: { content: string } }>;
        switchboard: { status: string };
      };
      expect(completion.choices[0]?.finish_reason).toBe('length');
      expect(completion.choices[0]?.message.content).toContain('First draft.');
      expect(completion.switchboard.status).toBe('budget_exceeded');
      const response = (await (
        await app.request('/v1/responses', json({ model: 'budgets', input: 'hi' }))
      ).json()) as {
        status: string;
        incomplete_details: { reason: string };
      };
      expect(response).toMatchObject({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
      });
    } finally {
      await close();
    }
  });
});

describe('session and tenant budgets in one process', () => {
  it('stops a tenant’s turns once its day is spent and lets them run again the next UTC day (injected clock)', async () => {
    let now = Date.UTC(2026, 10, 29, 22, 30);
    const { app, server, close } = await budgetApp(
      [spending('Monday.', 600, 100), spending('Tuesday.', 600, 100)],
      { drafts: 1, budgets: { tenant: { day: { totalTokens: 1000 } }, now: () => now } },
    );
    try {
      expect((await app.chat({ message: 'one' })).status).toBe('completed');
      const refused = await app.chat({ message: 'two' });
      expect(refused.status).toBe('budget_exceeded');
      expect(refused.steps.find((step) => step.label === 'budget')?.annotations).toMatchObject({
        scope: 'tenant-day',
        limit: 'totalTokens',
        used: 700,
      });
      expect(server.requests).toHaveLength(1);

      now += 2 * 3_600_000; // 00:30 the next day
      const usage = (await (await app.request('/v1/usage')).json()) as {
        tenantId: null;
        tenant: {
          day: { period: string; used: { totalTokens: number } };
          month: { used: { totalTokens: number } };
        };
      };
      expect(usage.tenantId).toBeNull();
      expect(usage.tenant.day).toMatchObject({ period: '2026-11-30', used: { totalTokens: 0 } });
      expect(usage.tenant.month.used.totalTokens).toBe(700);
      expect((await app.chat({ message: 'three' })).status).toBe('completed');
      expect(server.requests).toHaveLength(2);
    } finally {
      await close();
    }
  });

  it('counts a session’s budget over its period, apart from other sessions', async () => {
    const { app, close } = await budgetApp([spending('a', 600, 100), spending('b', 600, 100)], {
      drafts: 1,
      budgets: { session: { period: 'hour', totalTokens: 1000 } },
    });
    try {
      const first = await app.chat({ message: 'one' });
      expect(first.status).toBe('completed');
      expect((await app.chat({ sessionId: first.sessionId, message: 'two' })).status).toBe('budget_exceeded');
      expect((await app.chat({ message: 'elsewhere' })).status).toBe('completed');
    } finally {
      await close();
    }
  });
});

describe('GET /v1/usage', () => {
  const auth = apiKeys({
    keys: {
      [ACME_KEY]: { tenantId: 'acme', name: 'acme-web' },
      [GLOBEX_KEY]: { tenantId: 'globex', name: 'globex-bot' },
      'sk-acme-user-0123456789abcdef0123456789ab': { tenantId: 'acme', name: 'acme-ann', userId: 'ann' },
    },
  });

  it('shows a key its own tenant’s spending only, and another tenant’s session as not found', async () => {
    const { app, close } = await budgetApp([spending('Hello.', 600, 100)], {
      drafts: 1,
      auth,
      budgets: { tenant: { day: { totalTokens: 10_000 } } },
    });
    try {
      const chat = await app.request('/v1/chat', json({ message: 'hi' }, bearer(ACME_KEY)));
      const { sessionId } = (await chat.json()) as { sessionId: string };
      const read = async (key: string, query = '') =>
        app.request(`/v1/usage${query}`, { headers: bearer(key) });

      const acme = (await (await read(ACME_KEY, `?sessionId=${sessionId}`)).json()) as {
        tenantId: string;
        tenant: { day: { used: { totalTokens: number }; remaining: { totalTokens: number } } };
        session: { used: { totalTokens: number } };
      };
      expect(acme.tenantId).toBe('acme');
      expect(acme.tenant.day.used.totalTokens).toBe(700);
      expect(acme.tenant.day.remaining.totalTokens).toBe(9300);
      expect(acme.session.used.totalTokens).toBe(700);

      const globex = (await (await read(GLOBEX_KEY)).json()) as {
        tenantId: string;
        tenant: { day: { used: { totalTokens: number } } };
      };
      expect(globex.tenantId).toBe('globex');
      expect(globex.tenant.day.used.totalTokens).toBe(0);
      expect((await read(GLOBEX_KEY, `?sessionId=${sessionId}`)).status).toBe(404);

      // A user-bound key names its session and gets no tenant totals; another user's session is not there.
      const annKey = 'sk-acme-user-0123456789abcdef0123456789ab';
      expect((await read(annKey)).status).toBe(400);
      expect((await read(annKey, `?sessionId=${sessionId}`)).status).toBe(404);

      expect((await app.request('/v1/usage')).status).toBe(401);
      expect((await read(ACME_KEY, '?tenant=globex')).status).toBe(400);
    } finally {
      await close();
    }
  });

  it('answers 404 not_configured when the app has no budgets', async () => {
    const { app, close } = await budgetApp([], { drafts: 1 });
    try {
      const response = await app.request('/v1/usage');
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_configured');
    } finally {
      await close();
    }
  });
});

describe('budget metrics', () => {
  it('count the tokens and cost model calls spent and the calls a budget refused, per tenant', async () => {
    const { app, close } = await budgetApp([spending('First draft.', 600, 100)], {
      metrics: true,
      auth: apiKeys({ keys: { [ACME_KEY]: { tenantId: 'acme', name: 'acme-web' } } }),
      budgets: { turn: { totalTokens: 1000 }, prices: { 'poet-1': { input: 1, output: 2 } } },
    });
    try {
      const chat = await app.request('/v1/chat', json({ message: 'hi' }, bearer(ACME_KEY)));
      expect(((await chat.json()) as { status: string }).status).toBe('budget_exceeded');
      const samples = parseSamples(
        await (await app.request('/metrics', { headers: bearer(ACME_KEY) })).text(),
      );
      const value = (name: string, labels: Record<string, string>) =>
        samples.find(
          (sample) =>
            sample.name === name &&
            Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted),
        )?.value;
      expect(value('switchboard_model_tokens_total', { tenant: 'acme', kind: 'input' })).toBe(600);
      expect(value('switchboard_model_tokens_total', { tenant: 'acme', kind: 'output' })).toBe(100);
      expect(value('switchboard_model_cost_total', { tenant: 'acme' })).toBeCloseTo(0.0008, 9);
      expect(
        value('switchboard_budget_exceeded_total', { tenant: 'acme', scope: 'turn', limit: 'totalTokens' }),
      ).toBe(1);
      expect(value('switchboard_turns_total', { status: 'budget_exceeded' })).toBe(1);
    } finally {
      await close();
    }
  });
});

describe('budget options', () => {
  const bad: Array<[string, unknown]> = [
    ['a negative limit', { turn: { totalTokens: -1 } }],
    ['a fractional token limit', { tenant: { day: { inputTokens: 1.5 } } }],
    ['an unknown limit', { turn: { tokens: 100 } }],
    ['an unknown option', { perTurn: { totalTokens: 100 } }],
    ['an unknown period', { session: { period: 'week', totalTokens: 100 } }],
    ['an unknown tenant period', { tenant: { week: { totalTokens: 100 } } }],
    ['a cost limit without prices', { tenant: { month: { cost: 10 } } }],
    ['a bad price', { turn: { cost: 1 }, prices: { 'gpt-4o-mini': { input: -1, output: 1 } } }],
    ['a bad default output', { turn: { totalTokens: 10 }, defaultMaxOutputTokens: 0 }],
  ];
  it.each(bad)('refuses %s with a ConfigurationError when the app is made', (_what, budgets) => {
    expect(() => new App({ name: 'x', agents: [], budgets: budgets as BudgetOptions })).toThrow(
      ConfigurationError,
    );
  });
});

describe('docs/guides/budgets.md', () => {
  const page = readFileSync(new URL('../../../../docs/guides/budgets.md', import.meta.url), 'utf8');

  /** The object literal that follows `label` in `text`, braces balanced. */
  function literalAfter(text: string, label: string): string {
    const start = text.indexOf('{', text.indexOf(label));
    let depth = 0;
    for (let index = start; index < text.length; index += 1) {
      if (text[index] === '{') depth += 1;
      if (text[index] === '}' && --depth === 0) return text.slice(start, index + 1);
    }
    throw new Error(`no object after ${label}`);
  }

  it('shows budget options the app accepts, and lists every option in its table', () => {
    const example = new Function(`return ${literalAfter(page, 'budgets: ')}`)() as BudgetOptions;
    expect(() => checkBudgetOptions(example)).not.toThrow();
    const section = page.slice(page.indexOf('## Options'), page.indexOf('## How a call is checked'));
    const listed = [...section.matchAll(/^\| `([\w.]+)`(?:, `([\w.]+)`)? \|/gm)].flatMap((match) =>
      match.slice(1).filter((name): name is string => name !== undefined),
    );
    expect(listed.sort()).toEqual(
      ['defaultMaxOutputTokens', 'now', 'prices', 'session', 'tenant.day', 'tenant.month', 'turn'].sort(),
    );
  });

  it('shows a GET /v1/usage body of the documented shape', () => {
    const body = page.slice(
      page.indexOf('```json') + '```json'.length,
      page.indexOf('```', page.indexOf('```json') + 7),
    );
    expect(UsageReportSchema.safeParse(JSON.parse(body)).success).toBe(true);
  });
});
