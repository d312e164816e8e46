// Alerts (docs/api.md, "Alerts"): what a watch is, what an event it fires carries, and the two
// stores between the parts. The watches (watch-store.ts) are written by the routes and read by the
// evaluation after each publish; the events and their deliveries (the outbox) are written by the
// evaluation and worked by the delivery queue, which signs and POSTs each event to its watch's URL.
import type { WindowKey } from '../../core/snapshots/windows.ts';

/** What a watch looks at. */
export type WatchTarget =
  /** Narratives the map search (GET /narratives/search) finds for these words. */
  | { kind: 'query'; query: string }
  /** One story, by its stable narrative_key (a narrative id of the served generation is resolved to its key at creation). */
  | { kind: 'narrative'; narrative_key: string }
  /** The narratives of one theme, by its stable theme_key. */
  | { kind: 'theme'; theme_key: string }
  /** Every narrative (with the new_narrative condition: "any new narrative"). */
  | { kind: 'any' };

/** When a watch fires; each condition set is checked for each narrative the target selects. */
export interface WatchConditions {
  /** The narrative's newest day became a spike day (core/maps/daily-signals.ts) since the previous generation. */
  spike?: boolean;
  /** Its lifecycle changed; `to` limits the lifecycles it must change to (absent: any change). */
  lifecycle?: { to?: string[] };
  /** Its momentum_score crossed `level` (upward: was below, now at or above; `direction: "down"` the other way). */
  momentum?: { level: number; direction?: 'up' | 'down' };
  /** A story the previous generation did not know: no narrative of its narrative_key, none holding most of its posts, and a post it lacked. */
  new_narrative?: boolean;
}

/** The conditions, in the order an event lists its matches (and a watch's conditions are checked). */
export const ALERT_CONDITIONS = ['new_narrative', 'spike', 'lifecycle', 'momentum'] as const;
export type AlertCondition = (typeof ALERT_CONDITIONS)[number];

export interface Watch {
  /** alw_<random> */
  id: string;
  account: string;
  name: string | null;
  target: WatchTarget;
  windows: WindowKey[];
  conditions: WatchConditions;
  /** The webhook: http(s) only; loopback and private addresses refused unless ALERTS_ALLOW_PRIVATE=1. */
  url: string;
  created_at: string;
  /** Bumped to give the watch a new signing secret (watch-secret.ts derives it; nothing secret is stored). */
  secret_version: number;
  /** Set when its endpoint kept failing: deliveries wait until the watch is resumed. */
  paused: { at: string; reason: string } | null;
}

/** The figures an event compares, of one narrative in one generation. */
export interface NarrativeFigures {
  generation: string;
  narrative_id: string;
  content_count: number;
  momentum_score: number;
  emerging_score: number;
  lifecycle: string | null;
  /** The newest day of its daily series and that day's posts. */
  last_day: string | null;
  last_day_posts: number;
  spike: boolean;
}

/** One change an event covers: a condition one narrative of the story met. */
export interface AlertMatch {
  window: WindowKey;
  condition: AlertCondition;
  narrative_id: string;
  narrative_key: string;
  label: string;
  /** Why it fired: a sentence, and the figures before (null when it had no predecessor in its window) and after. */
  why: { text: string; before: NarrativeFigures | null; after: NarrativeFigures };
}

/**
 * What a watch fired for one story in one generation: POSTed (JSON) to the watch's URL. Its
 * top-level window, narrative, type and why are its first match's (the primary), as an event
 * covering one change always was; `matches` lists every change it covers, the primary first.
 */
export interface AlertEvent {
  /** evt_<hash of watch, story, generation>: the same story is the same id on every replica and every retry. */
  id: string;
  type: `narrative.${AlertCondition}`;
  watch_id: string;
  account: string;
  created_at: string;
  generation: string;
  previous_generation: string | null;
  window: WindowKey;
  narrative: {
    id: string;
    narrative_key: string;
    label: string;
    summary: string;
    theme_id: string | null;
    /** {base_url}/narratives/{id}: the API's (a key is needed) */
    url: string;
    /** {base_url}/ui/narrative.html?id={id}: the dashboard's page of it */
    dashboard_url: string;
  };
  why: AlertMatch['why'];
  matches: AlertMatch[];
  /** The primary narrative's central posts (the posts a reader opens first, at most 3), with their text cut short. */
  posts: Array<{ uuid: string; title: string | null; text: string | null; url: string | null }>;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'paused';

/**
 * The statuses of an event still to be delivered: pending (due, or retrying) and paused (its watch
 * paused). Delivered and failed (given up, sent again only on request) are done with.
 */
export const WAITING_STATUSES = ['pending', 'paused'] as const satisfies readonly DeliveryStatus[];
export type WaitingCounts = Record<(typeof WAITING_STATUSES)[number], number>;

/** An event with where its delivery stands. */
export interface EventState {
  event: AlertEvent;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/** One POST of an event to its watch's URL. */
export interface DeliveryAttempt {
  event_id: string;
  watch_id: string;
  attempt: number;
  at: string;
  /** The receiver's HTTP status; null when none came (timeout, refused, a refused address). */
  status: number | null;
  error: string | null;
  latency_ms: number;
  outcome: 'delivered' | 'retry' | 'gave_up';
}

/** The events and their deliveries (the outbox): the delivery queue's side. */
export interface AlertOutbox {
  open(): Promise<void>;
  /** Keeps and queues the events not kept yet (by id); returns those it added. */
  add(events: AlertEvent[]): Promise<AlertEvent[]>;
  /** A watch's newest events, newest first. */
  events(watchId: string, limit: number): Promise<EventState[]>;
  /** A watch's newest delivery attempts, newest first. */
  attempts(watchId: string, limit: number): Promise<DeliveryAttempt[]>;
  /** Queue an event again now (the API's redelivery); null when the watch has no such event. */
  redeliver(watchId: string, eventId: string): Promise<EventState | null>;
  /** Queue a resumed watch's waiting events. */
  resume(watchId: string): Promise<number>;
  /** Drop a deleted watch's events and attempts. */
  forget(watchId: string): Promise<void>;
  /** Every watch's events still to be delivered, by status: the backlog /metrics shows. */
  countWaiting(): Promise<WaitingCounts>;
  close(): Promise<void>;
}

/** Who counts deliveries (the /metrics registry). */
export interface DeliveryObserver {
  attempt(outcome: DeliveryAttempt['outcome'], latencyMs: number): void;
}
