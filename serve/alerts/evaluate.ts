// What the watches fire for one publish (docs/api.md, "Alerts", "When a watch fires"): the new
// generation's narrative map against the previous generation's, narrative by narrative (by
// narrative_key, else by the posts: story-links.ts), the changes of one story (its narratives in
// the watched windows, every condition they met) made one event per watch. Pure: the same two maps
// and watches give the same events with the same ids, so replicas evaluating one publish, or a
// restart evaluating it again, make the events the outbox already keeps (it keeps one per id).
import { createHash } from 'node:crypto';
import { lastDaySpikes } from '../../core/maps/daily-signals.ts';
import { DAY_MS, type WindowKey } from '../../core/snapshots/windows.ts';
import type { LoadedNarrative, Maps } from '../generation/load-maps.ts';
import { searchNarratives } from '../maps/narrative-rank.ts';
import {
  ALERT_CONDITIONS,
  type AlertCondition,
  type AlertEvent,
  type AlertMatch,
  type NarrativeFigures,
  type Watch,
} from './alert-model.ts';
import { storyLinks, type LinkedSide } from './story-links.ts';

/** A query watch sees the first this many narratives of the map search in each of its windows (GET /narratives/search's default limit). */
const QUERY_WATCH_NARRATIVES = 20;

type EvaluatedMaps = Pick<Maps, 'narratives' | 'narrativeByKey' | 'themeByKey' | 'narrativeText' | 'narrativeMemberTerms'>;

/** One generation as the evaluation reads it. */
export interface GenerationSide extends LinkedSide {
  id: string;
  /** Its manifest's as_of: the end of every narrative's newest day. */
  asOfIso: string;
  maps: EvaluatedMaps;
}

export interface Publish {
  after: GenerationSide & {
    /** Its manifest's computed_at: a watch sees the generations computed after it was created. */
    computedAt: string;
    /** The posts an event on this narrative carries (event-posts.ts). */
    posts(ln: LoadedNarrative): AlertEvent['posts'];
  };
  before: GenerationSide;
  /** {base_url}: an event's narrative url is {base_url}/narratives/{id}, its dashboard page under {base_url}/ui/. */
  baseUrl: string;
  /** The events' created_at. */
  now: string;
}

/** evt_ + 128 bits of SHA-256 over what makes the event one: the watch, the story (its key, story-links.ts) and the generation. */
export function eventId(watchId: string, storyKey: string, generation: string): string {
  const h = createHash('sha256').update(`${watchId}\n${storyKey}\n${generation}`).digest('base64url');
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
    last_day: days.length ? new Date(Date.parse(side.asOfIso) - DAY_MS).toISOString() : null,
    last_day_posts: days.length ? days[days.length - 1]! : 0,
    spike: lastDaySpikes(days),
  };
}

const fmt = (x: number) => x.toFixed(2);

/** What the previous generation had of a narrative: its predecessor's figures (same window), and whether it knew the story at all. */
interface Past {
  figures: NarrativeFigures | null;
  known: boolean;
}

/** Why each condition fires for a narrative (null: it does not), given what was before and its figures after. */
function why(w: Watch, c: AlertCondition, past: Past, after: NarrativeFigures, label: string): string | null {
  const before = past.figures;
  switch (c) {
    case 'new_narrative':
      return past.known ? null : `new narrative "${label}" with ${after.content_count} posts`;
    case 'spike':
      if (!after.spike || before?.spike) return null;
      return (
        `${after.last_day_posts} posts on its newest day (from ${after.last_day}) make a spike day` +
        (before
          ? `; the previous generation's newest day had ${before.last_day_posts} and was not one`
          : past.known
            ? '; the previous generation had no narrative of it in this window'
            : '; the narrative is new')
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

/** The order of an event's matches: by condition (ALERT_CONDITIONS), then the widest window first. */
const WIDEST_FIRST: readonly WindowKey[] = ['all', '90d', '30d', '7d'];

interface Found {
  ln: LoadedNarrative;
  match: AlertMatch;
}

function byPrimacy(a: Found, b: Found): number {
  const m = a.match;
  const n = b.match;
  return (
    ALERT_CONDITIONS.indexOf(m.condition) - ALERT_CONDITIONS.indexOf(n.condition) ||
    WIDEST_FIRST.indexOf(m.window) - WIDEST_FIRST.indexOf(n.window) ||
    (m.narrative_id < n.narrative_id ? -1 : m.narrative_id > n.narrative_id ? 1 : 0)
  );
}

/** One story's changes for one watch as its event: the primary (first) match on top, every match listed. */
function eventOf(p: Publish, w: Watch, storyKey: string, found: Found[]): AlertEvent {
  found.sort(byPrimacy);
  const { ln, match } = found[0]!;
  const n = ln.narrative;
  const id = encodeURIComponent(n.id);
  return {
    id: eventId(w.id, storyKey, p.after.id),
    type: `narrative.${match.condition}`,
    watch_id: w.id,
    account: w.account,
    created_at: p.now,
    generation: p.after.id,
    previous_generation: p.before.id,
    window: match.window,
    narrative: {
      id: n.id,
      narrative_key: match.narrative_key,
      label: n.label,
      summary: n.summary,
      theme_id: n.theme_id ?? null,
      url: `${p.baseUrl}/narratives/${id}`,
      dashboard_url: `${p.baseUrl}/ui/narrative.html?id=${id}`,
    },
    why: match.why,
    matches: found.map((f) => f.match),
    posts: p.after.posts(ln),
  };
}

/** The conditions a watch sets, in ALERT_CONDITIONS' order. */
function conditionsOf(w: Watch): AlertCondition[] {
  return ALERT_CONDITIONS.filter((c) => w.conditions[c]);
}

/**
 * The evaluation of one publish: a function of a watch giving the events it fires. Figures, what
 * came before, stories and query selections are computed once per narrative and query, however
 * many watches read them.
 */
export function createEvaluation(p: Publish): (w: Watch) => AlertEvent[] {
  const { after, before } = p;
  const figures = new Map<LoadedNarrative, NarrativeFigures>();
  const figured = (side: GenerationSide, ln: LoadedNarrative) => {
    let f = figures.get(ln);
    if (!f) figures.set(ln, (f = figuresOf(side, ln)));
    return f;
  };
  const links = storyLinks(before, after);
  /** The previous generation's narrative of its key, else the one of its window holding most of its posts (story-links.ts). */
  const pastOf = (ln: LoadedNarrative): Past => {
    const was = before.maps.narrativeByKey.get(ln.narrative.narrative_key!);
    if (was) return { figures: figured(before, was), known: true };
    const p = links.predecessor(ln);
    return { figures: p.sameWindow ? figured(before, p.sameWindow) : null, known: p.known };
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
    const stories = new Map<string, Found[]>();
    for (const window of w.windows) {
      for (const ln of selected(w, window)) {
        const key = ln.narrative.narrative_key;
        if (!key) continue;
        const past = pastOf(ln);
        const now = figured(after, ln);
        for (const c of conditions) {
          const text = why(w, c, past, now, ln.narrative.label);
          if (text === null) continue;
          const match: AlertMatch = {
            window,
            condition: c,
            narrative_id: ln.narrative.id,
            narrative_key: key,
            label: ln.narrative.label,
            why: { text, before: past.figures, after: now },
          };
          const story = links.story(ln).narrative;
          const storyKey = story.narrative_key ?? story.id;
          const list = stories.get(storyKey);
          if (list) list.push({ ln, match });
          else stories.set(storyKey, [{ ln, match }]);
        }
      }
    }
    return Array.from(stories, ([storyKey, found]) => eventOf(p, w, storyKey, found));
  };
}
