import { readFileSync } from 'node:fs';
import type { App, TurnResult } from '@switchboard/runtime';
import { createScriptedModelServer, type ScriptedModelServer } from '@switchboard/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { supportDeskModel } from '../src/offline-model.js';
import { SupportServices } from '../src/services.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const { name } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
};

let closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closing.map((close) => close()));
  closing = [];
});

/** The desk on a scripted model that must be asked exactly `modelCalls` times (classifier, writer). */
async function desk(
  modelCalls = 2,
): Promise<{ app: App; model: ScriptedModelServer; services: SupportServices }> {
  const model = await createScriptedModelServer({
    script: Array.from({ length: modelCalls }, () => supportDeskModel),
  });
  const services = new SupportServices({ latencyMs: 30 });
  const { app, orchestrator } = buildApp({
    model: 'gpt-4o-mini',
    apiKey: 'test',
    baseURL: model.url,
    services,
    logLevel: 'silent',
  });
  app.mount(orchestrator);
  closing.push(
    () => app.close(),
    () => model.close(),
  );
  return { app, model, services };
}

const chat = async (app: App, message: string) =>
  (await (
    await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message }),
    })
  ).json()) as TurnResult;

const path = (result: TurnResult) => result.steps.flatMap((step) => step.annotations?.graphNodes ?? []);

describe('support-graph example (scripted model)', () => {
  it('answers a technical question: classify, technical, both lookups at once, review, respond', async () => {
    const { app, model, services } = await desk();
    const result = await chat(app, 'the app crashes on start');
    expect(result.status).toBe('completed');
    expect(result.reply).toBe(
      'Thanks for reaching out about "the app crashes on start". Outcome: no refund needed. See KB-48 When the app crashes on start.',
    );
    expect(path(result)).toEqual(['classify', 'technical', 'account', 'knowledge', 'review', 'respond']);
    // The CRM and the knowledge base were asked at once: each started before the other ended.
    const [crm, kb] = ['crm', 'kb'].map(
      (service) => services.calls.find((call) => call.service === service)!,
    );
    expect(crm!.startedAt).toBeLessThan(kb!.endedAt);
    expect(kb!.startedAt).toBeLessThan(crm!.endedAt);
    model.assertDone();
  });

  it('pays a small refund at once, and waits for a person over the threshold', async () => {
    const { app, services } = await desk(4);
    const small = await chat(app, 'please refund 40 EUR, I was charged twice');
    expect(small.status).toBe('completed');
    expect(small.reply).toContain('Outcome: refund of 40 EUR paid');
    expect(path(small)).toEqual(['classify', 'billing', 'account', 'knowledge', 'review', 'respond']);

    const large = await chat(app, 'acme here: refund 250 EUR for the double charge');
    expect(large.status).toBe('awaiting_approval');
    expect(large.approvals?.[0]).toMatchObject({
      message: 'refund 250 EUR to acme',
      reason: 'a refund of 250 EUR is over 100 EUR',
    });
    expect([...services.payments.values()]).toEqual([40]);
    const response = await app.request(
      `/v1/sessions/${large.sessionId}/approvals/${large.approvals?.[0]?.id}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      },
    );
    const approved = (await response.json()) as TurnResult;
    expect(approved.status).toBe('completed');
    expect(approved.reply).toContain('Outcome: refund of 250 EUR paid');
    expect([...services.payments.values()]).toEqual([40, 250]);
  });

  it('publishes the graph on GET /v1/agents', async () => {
    const { app } = await desk(0);
    const body = (await (await app.request('/v1/agents')).json()) as {
      graph?: { mermaid: string; entry: string };
    };
    expect(body.graph?.entry).toBe('classify');
    expect(body.graph?.mermaid).toContain('n_classify -.-> n_billing');
    // The docs page shows the same picture.
    const doc = readFileSync(new URL('../../../docs/guides/graphs.md', import.meta.url), 'utf8');
    expect(doc).toContain(body.graph?.mermaid.trim());
  });

  it('starts the example with the package name it has', () => {
    expect(readme).toContain(`pnpm --filter ${name} start`);
  });
});
