// What the watches fire for one publish (docs/api.md, "Alerts", "When a watch fires"): the new
// generation's narrative map against the previous generation's, narrative by narrative (by
// narrative_key). Pure: the same two maps and watches give the same events with the same ids, so
// replicas evaluating one publish, or a restart evaluating it again, make the events the outbox
// already keeps (it keeps one per id).
import { createHash } from 'node:crypto';
import { lastDaySpikes } from '../../core/maps/daily-signals.ts';
import { DAY_MS, type WindowKey } from '../../core/snapshots/windows.ts';
import type { LoadedNarrative, Maps } from '../generation/load-maps.ts';
import { searchNarratives } from '../maps/narrative-rank.ts';
import type { AlertCondition, AlertEvent, NarrativeFigures, Watch } from './alert-model.ts';

/** A query watch sees the first this many narratives of the map search in each of its windows (GET /narratives/search's default limit). */
const QUERY_WATCH_NARRATIVES = 20;
/** Representative posts an event carries. */
export const EVENT_POSTS = 3;

type EvaluatedMaps = Pick<Maps, 'narratives' | 'narrativeByKey' | 'themeByKey' | 'narrativeText' | 'narrativeMemberTerms'>;

/** One generation as the evaluation reads it. */
export interface GenerationSide {
  id: string;
  /** Its manifest's as_of: the end of every narrative's newest day. */
  asOf: string;
  maps: EvaluatedMaps;
}

export interface Publish {
  after: GenerationSide & {
    /** Its manifest's computed_at: a watch sees the generations computed after it was created. */
    computedAt: string;
    /** Posts of these rows (most central first) as an event carries them. */
    posts(rows: Int32Array): AlertEvent['posts'];
  };
  before: GenerationSide;
  /** {base_url}: an event's narrative url is {base_url}/narratives/{id}. */
  baseUrl: string;
  /** The events' created_at. */
  now: string;
}

/** evt_ + 128 bits of SHA-256 over what makes the change one change. */
export function eventId(watchId: string, condition: AlertCondition, narrativeKey: string, generation: string): string {
  const h = createHash('sha256').update(`${watchId}\n${condition}\n${narrativeKey}\n${generation}`).digest('base64url');
  return `evt_${h.slice(0, 22)}`;
}

function figuresOf(side: GenerationSide, ln: LoadedNarrative): NarrativeFigures {
  const n = ln.narrative;
  const days = ln.dailyCounts;
  return {
    generation: side.id,
    narrative_id: n.id,
    content_count: n.content_count,
    momentum_score: n.momentum_score,
    emerging_score: n.emerging_score,
    lifecycle: n.lifecycle,
    last_day: days.length ? new Date(Date.parse(side.asOf) - DAY_MS).toISOString() : null,
    last_day_posts: days.length ? days[days.length - 1]! : 0,
    spike: lastDaySpikes(days),
  };
}

const fmt = (x: number) => x.toFixed(2);

/** Why each condition fires for a narrative (null: it does not), given its figures before (null: new) and after. */
function why(w: Watch, c: AlertCondition, before: NarrativeFigures | null, after: NarrativeFigures, label: string): string | null {
  switch (c) {
    case 'new_narrative':
      return before ? null : `new narrative "${label}" with ${after.content_count} posts`;
    case 'spike':
      if (!after.spike || before?.spike) return null;
      return (
        `${after.last_day_posts} posts on its newest day (from ${after.last_day}) make a spike day` +
        (before ? `; the previous generation's newest day had ${before.last_day_posts} and was not one` : '; the narrative is new')
      );
    case 'lifecycle': {
      const to = w.conditions.lifecycle?.to;
      if (!before || before.lifecycle === after.lifecycle || (to && !to.includes(after.lifecycle ?? ''))) return null;
      return `lifecycle ${before.lifecycle ?? 'none'} -> ${after.lifecycle ?? 'none'}`;
    }
    case 'momentum': {
      const m = w.conditions.momentum!;
      if (!before) return null;
      const crossed =
        m.direction === 'down'
          ? before.momentum_score >= m.level && after.momentum_score < m.level
          : before.momentum_score < m.level && after.momentum_score >= m.level;
      return crossed ? `momentum ${fmt(before.momentum_score)} -> ${fmt(after.momentum_score)} crossed ${m.level}` : null;
    }
  }
}

/** The conditions a watch sets, in the order its events are made. */
function conditionsOf(w: Watch): AlertCondition[] {
  const c = w.conditions;
  return [
    ...(c.new_narrative ? (['new_narrative'] as const) : []),
    ...(c.spike ? (['spike'] as const) : []),
    ...(c.lifecycle ? (['lifecycle'] as const) : []),
    ...(c.momentum ? (['momentum'] as const) : []),
  ];
}

/**
 * The evaluation of one publish: a function of a watch giving the events it fires. Figures and
 * query selections are computed once per narrative and query, however many watches read them.
 */
export function createEvaluation(p: Publish): (w: Watch) => AlertEvent[] {
  const { after, before } = p;
  const figures = new Map<LoadedNarrative, NarrativeFigures>();
  const figured = (side: GenerationSide, ln: LoadedNarrative) => {
    let f = figures.get(ln);
    if (!f) figures.set(ln, (f = figuresOf(side, ln)));
    return f;
  };
  const searched = new Map<string, LoadedNarrative[]>();
  const byWindow = new Map<string, LoadedNarrative[]>();
  for (const ln of after.maps.narratives) {
    const list = byWindow.get(ln.narrative.window_key);
    if (list) list.push(ln);
    else byWindow.set(ln.narrative.window_key, [ln]);
  }

  /** The narratives of the new generation the watch's target selects in one window. */
  function selected(w: Watch, window: WindowKey): LoadedNarrative[] {
    const t = w.target;
    const inWindow = (ln: LoadedNarrative | undefined) => (ln && ln.narrative.window_key === window ? [ln] : []);
    switch (t.kind) {
      case 'any':
        return byWindow.get(window) ?? [];
      case 'narrative':
        return inWindow(after.maps.narrativeByKey.get(t.narrative_key));
      case 'theme':
        return (after.maps.themeByKey.get(t.theme_key)?.narratives ?? []).filter((ln) => ln.narrative.window_key === window);
      case 'query': {
        const k = `${window}\u0000${t.query}`;
        let list = searched.get(k);
        if (!list) searched.set(k, (list = searchNarratives(after.maps, t.query, window, QUERY_WATCH_NARRATIVES).map((h) => h.ln)));
        return list;
      }
    }
  }

  return (w) => {
    // A watch sees only the generations computed after it was made.
    if (!(Date.parse(after.computedAt) > Date.parse(w.created_at))) return [];
    const conditions = conditionsOf(w);
    const events: AlertEvent[] = [];
    for (const window of w.windows) {
      for (const ln of selected(w, window)) {
        const n = ln.narrative;
        const key = n.narrative_key;
        if (!key) continue;
        const was = before.maps.narrativeByKey.get(key);
        const then = was ? figured(before, was) : null;
        const now = figured(after, ln);
        for (const c of conditions) {
          const text = why(w, c, then, now, n.label);
          if (text === null) continue;
          events.push({
            id: eventId(w.id, c, key, after.id),
            type: `narrative.${c}`,
            watch_id: w.id,
            account: w.account,
            created_at: p.now,
            generation: after.id,
            previous_generation: before.id,
            window: n.window_key as WindowKey,
            narrative: {
              id: n.id,
              narrative_key: key,
              label: n.label,
              summary: n.summary,
              theme_id: n.theme_id ?? null,
              url: `${p.baseUrl}/narratives/${encodeURIComponent(n.id)}`,
            },
            why: { text, before: then, after: now },
            posts: after.posts(ln.members.subarray(0, EVENT_POSTS)),
          });
        }
      }
    }
    return events;
  };
}
