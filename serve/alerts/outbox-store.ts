// Where the outbox keeps its events and their delivery attempts (docs/api.md, "Webhook
// deliveries"): the files of DATA_DIR/alerts/outbox (one process; file-outbox-store.ts) or PostgreSQL
// (DATABASE_URL, every replica; pg-outbox-store.ts; open-outbox-store.ts picks). The store also queues: a state that makes an event
// due is written with its queue entry (in one transaction on PostgreSQL; on files, a restart
// queues every pending event again), so an event kept is never an event forgotten.
//
// A queue entry names the event and its turn ("evt_x:3"). Each change that queues the event again
// (a retry, a redelivery, a resume) takes a new turn, so an entry left over from an earlier turn
// finds nothing to do: an event is attempted by one run at a time however its entries pile up.
import type { TaskQueue } from '../queue/task-queue.ts';
import type { AlertEvent, DeliveryAttempt, DeliveryStatus, EventState, WaitingCounts } from './alert-model.ts';

/** What the delivery needs beyond the API's EventState. */
export interface OutboxEntry extends EventState {
  /** The turn a queue entry must name to attempt the event. */
  turn: number;
  /** Its retry span starts here: when it was added, redelivered or resumed (stored names: window_*, as journals and rows were written). */
  window_start: string;
  /** Attempts since the span's start (the backoff's exponent). */
  window_attempts: number;
}

/** A queue entry's text: the event and its turn. */
export const queueEntry = (eventId: string, turn: number) => `${eventId}:${turn}`;

export function parseQueueEntry(entry: string): { eventId: string; turn: number } | null {
  const i = entry.lastIndexOf(':');
  const turn = Number(entry.slice(i + 1));
  return i > 0 && Number.isInteger(turn) ? { eventId: entry.slice(0, i), turn } : null;
}

/** A lease on an event for one attempt, or why there is none: nothing to do (delivered, another turn, gone), or another run holds it until `busyUntil`. */
export type Lease = { entry: OutboxEntry } | { skip: true } | { busyUntil: Date };

/** An attempt's consequence for its event. */
export interface AttemptResult {
  attempt: DeliveryAttempt;
  status: DeliveryStatus;
  /** For a retry: when (queued with the new state). */
  next_attempt_at: Date | null;
}

/** Each watch keeps its newest events and attempts (and every event still waiting or pending). */
export const EVENTS_KEPT = 100;
export const ATTEMPTS_KEPT = 200;

export interface OutboxStore {
  /** Open (migrate, replay); returns the queue entries to queue again (one process: its queue lived in memory). */
  open(): Promise<Array<{ entry: string; at: Date }>>;
  /** Keep the events not kept yet (by id) as pending and queue them; returns those added. */
  add(events: AlertEvent[], now: Date, queue: TaskQueue): Promise<AlertEvent[]>;
  /** Lease an event for one attempt (leaseMs): when the entry's turn is current, it is pending, and no other run holds it. */
  lease(eventId: string, turn: number, now: Date, leaseMs: number): Promise<Lease>;
  /** Record the attempt and, when the turn is still current, the event's new state (a retry queued with it). */
  record(eventId: string, turn: number, s: AttemptResult, queue: TaskQueue): Promise<void>;
  /** A paused watch's event waits (status paused) until the watch is resumed. */
  park(eventId: string, turn: number): Promise<void>;
  /** Make one event (any status) or every waiting event of the watch due now, with a fresh retry span; returns them. */
  requeue(watchId: string, eventId: string | null, now: Date, queue: TaskQueue): Promise<EventState[]>;
  events(watchId: string, limit: number): Promise<EventState[]>;
  attempts(watchId: string, limit: number): Promise<DeliveryAttempt[]>;
  /** When the watch's endpoint last took an event (the pause rule: did it take any during a failed retry span?). */
  lastDeliveredAt(watchId: string): Promise<Date | null>;
  forget(watchId: string): Promise<void>;
  /** Every watch's events still to be delivered (pending, paused), counted. */
  countWaiting(): Promise<WaitingCounts>;
  close(): Promise<void>;
}

/** The API's view of an entry. */
export function publicState(e: OutboxEntry): EventState {
  return { event: e.event, status: e.status, attempts: e.attempts, next_attempt_at: e.next_attempt_at, delivered_at: e.delivered_at };
}
