// The prose of an insights result (the tier-2 add-on): pluggable. By default a deterministic
// template writer reads the analysis' own figures (no model, nothing downloaded); with
// SUMMARY_API_URL set, an OpenAI-compatible chat-completions endpoint writes it from the same
// figures, and the template is the fallback when that endpoint fails or times out.

export interface Summary {
  text: string;
  source: 'template' | 'llm';
  model?: string;
  fallback_reason?: string;
}
export interface Summariser {
  summarise(analysis: InsightsFigures): Promise<Summary>;
}

/** The parts of an insights analysis the prose speaks about. */
export interface InsightsFigures {
  query: string;
  window: string;
  analysed: number;
  narratives: Array<{ label: string; memberOverlap: number }>;
  sentiment: { label: string | null; dominant_tone: string | null; stance: Record<string, number> | null };
  themes: Array<{ theme: string; count: number }>;
  platforms: Array<{ platform: string; share: number }>;
  signals?: { lifecycle: string | null; velocity: number | null; anomalies: Array<{ day: string; count: number }> };
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
const WINDOW_WORDS: Record<string, string> = {
  '7d': 'the last 7 days',
  '30d': 'the last 30 days',
  '90d': 'the last 90 days',
  all: 'the whole corpus',
};

export class TemplateSummariser implements Summariser {
  async summarise(a: InsightsFigures): Promise<Summary> {
    if (a.analysed === 0) return { text: `No posts matched "${a.query}" in ${WINDOW_WORDS[a.window] ?? a.window}.`, source: 'template' };
    const parts = [`${a.analysed.toLocaleString('en-US')} posts about "${a.query}" in ${WINDOW_WORDS[a.window] ?? a.window}.`];
    const p = a.platforms[0];
    if (p)
      parts.push(
        `Most are on ${p.platform} (${pct(p.share)})${a.platforms[1] ? `, then ${a.platforms[1].platform} (${pct(a.platforms[1].share)})` : ''}.`,
      );
    if (a.sentiment.label) {
      const stance = a.sentiment.stance ? Object.entries(a.sentiment.stance).sort((x, y) => y[1] - x[1])[0] : null;
      parts.push(`The tone is ${a.sentiment.label}${stance ? `; the most common stance is ${stance[0]} (${pct(stance[1])})` : ''}.`);
    }
    if (a.narratives[0])
      parts.push(`The leading narrative is "${a.narratives[0].label}" (${a.narratives[0].memberOverlap} of these posts).`);
    if (a.themes.length)
      parts.push(
        `Recurring themes: ${a.themes
          .slice(0, 3)
          .map((t) => t.theme)
          .join(', ')}.`,
      );
    if (a.signals) {
      if (a.signals.lifecycle) {
        const v = a.signals.velocity;
        const pace = v !== null ? ` (${v >= 0 ? '+' : ''}${v.toFixed(1)} posts a day, day over day, this week)` : '';
        parts.push(`Activity is ${a.signals.lifecycle}${pace}.`);
      }
      if (a.signals.anomalies.length)
        parts.push(
          `Unusual spikes on ${a.signals.anomalies
            .slice(-3)
            .map((x) => `${x.day} (${x.count})`)
            .join(', ')}.`,
        );
    }
    return { text: parts.join(' '), source: 'template' };
  }
}

interface LlmConfig {
  url: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

export class OpenAiCompatibleSummariser implements Summariser {
  private readonly fallback = new TemplateSummariser();
  constructor(private readonly c: LlmConfig) {}

  async summarise(a: InsightsFigures): Promise<Summary> {
    try {
      const res = await fetch(`${this.c.url.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.c.apiKey ? { authorization: `Bearer ${this.c.apiKey}` } : {}) },
        body: JSON.stringify({
          model: this.c.model,
          temperature: 0,
          messages: [
            {
              role: 'system',
              content:
                'You write a short, factual summary (at most 5 sentences) of social media analysis figures. Use only the figures given.',
            },
            { role: 'user', content: JSON.stringify(a) },
          ],
        }),
        signal: AbortSignal.timeout(this.c.timeoutMs),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }> };
      const text = body.choices?.[0]?.message?.content?.trim();
      if (!text) throw new Error('no text in the completion');
      return { text, source: 'llm', model: this.c.model };
    } catch (err) {
      return { ...(await this.fallback.summarise(a)), fallback_reason: `summary endpoint failed: ${(err as Error).message}` };
    }
  }
}

export function summariserFrom(c: {
  SUMMARY_API_URL?: string;
  SUMMARY_API_KEY?: string;
  SUMMARY_MODEL: string;
  SUMMARY_TIMEOUT_MS: number;
}): Summariser {
  return c.SUMMARY_API_URL
    ? new OpenAiCompatibleSummariser({
        url: c.SUMMARY_API_URL,
        apiKey: c.SUMMARY_API_KEY,
        model: c.SUMMARY_MODEL,
        timeoutMs: c.SUMMARY_TIMEOUT_MS,
      })
    : new TemplateSummariser();
}
