// The insights prose: the template writer is deterministic and reads the figures; the
// OpenAI-compatible writer calls a real chat-completions endpoint over HTTP (a local server that
// speaks the protocol), sends the figures, uses the completion, and falls back to the template
// when the endpoint fails.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OpenAiCompatibleSummariser, summariserFrom, TemplateSummariser, type InsightsFigures } from '../../serve/jobs/summariser.ts';

const figures: InsightsFigures = {
  query: 'battery recall',
  window: '30d',
  analysed: 1234,
  narratives: [{ label: 'battery, recall, fire', memberOverlap: 210 }],
  sentiment: { label: 'negative', dominant_tone: 'negative', stance: { critical: 0.6, mixed: 0.1, neutral: 0.2, supportive: 0.1 } },
  themes: [
    { theme: 'battery', count: 300 },
    { theme: 'recall', count: 250 },
  ],
  platforms: [
    { platform: 'x', share: 0.55 },
    { platform: 'reddit', share: 0.3 },
  ],
  signals: { lifecycle: 'growing', velocity: 2.5, anomalies: [{ day: '2026-10-20', count: 90 }] },
};

test('the template writer: deterministic, and it says what the figures say', async () => {
  const a = await new TemplateSummariser().summarise(figures);
  assert.equal(a, await new TemplateSummariser().summarise(figures));
  assert.is(a.source, 'template');
  for (const s of [
    '1,234 posts about "battery recall" in the last 30 days',
    'x (55%)',
    'reddit (30%)',
    'negative',
    'critical (60%)',
    '"battery, recall, fire" (210',
    'growing',
    '2026-10-20 (90)',
  ])
    assert.ok(a.text.includes(s), s);
  assert.match((await new TemplateSummariser().summarise({ ...figures, analysed: 0 })).text, /No posts matched/);
});

test('an OpenAI-compatible endpoint writes the prose; a failing one falls back to the template', async () => {
  const seen: any[] = [];
  let fail = false;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ url: req.url, auth: req.headers.authorization, body: JSON.parse(body) });
      res.writeHead(fail ? 503 : 200, { 'content-type': 'application/json' });
      res.end(
        fail
          ? '{"error":"overloaded"}'
          : JSON.stringify({ choices: [{ message: { role: 'assistant', content: '  Battery recall talk is growing.  ' } }] }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const s = summariserFrom({ SUMMARY_API_URL: url, SUMMARY_API_KEY: 'sk-test', SUMMARY_MODEL: 'small-model', SUMMARY_TIMEOUT_MS: 5000 });
    assert.ok(s instanceof OpenAiCompatibleSummariser);
    assert.equal(await s.summarise(figures), { text: 'Battery recall talk is growing.', source: 'llm', model: 'small-model' });
    assert.is(seen[0].url, '/v1/chat/completions');
    assert.is(seen[0].auth, 'Bearer sk-test');
    assert.is(seen[0].body.model, 'small-model');
    assert.equal(JSON.parse(seen[0].body.messages[1].content), figures);
    fail = true;
    const fallback = await s.summarise(figures);
    assert.is(fallback.source, 'template');
    assert.match(fallback.fallback_reason!, /HTTP 503/);
    assert.is(fallback.text, (await new TemplateSummariser().summarise(figures)).text);
  } finally {
    server.close();
  }
  assert.ok(summariserFrom({ SUMMARY_MODEL: 'm', SUMMARY_TIMEOUT_MS: 1 }) instanceof TemplateSummariser);
});

test.run();
