// The outbox on files (one process, no DATABASE_URL): DATA_DIR/alerts/outbox/journal.jsonl, a
// journal of every change (core/infra/json-journal.ts: an add or a retry is acknowledged only once
// fsynced), replayed into memory at open and rewritten from memory once it holds four times more
// lines than the state it describes. Memory holds each watch's newest EVENTS_KEPT events and
// ATTEMPTS_KEPT attempts, plus every event still pending or waiting, so it is bounded by the
// watches, not by time. Leases live in memory only: the process is the one runner.
import path from 'node:path';
import { JsonJournal } from '../../core/infra/json-journal.ts';
import type { TaskQueue } from '../queue/task-queue.ts';
import type { AlertEvent, DeliveryAttempt, EventState, WaitingCounts } from './alert-model.ts';
import {
  ATTEMPTS_KEPT,
  EVENTS_KEPT,
  publicState,
  queueEntry,
  type Lease,
  type OutboxStore,
  type OutboxEntry,
  type AttemptResult,
} from './outbox-store.ts';

type StateFields = Omit<OutboxEntry, 'event'>;
type Line =
  | { t: 'add'; e: OutboxEntry }
  | { t: 'set'; id: string; s: StateFields }
  | { t: 'attempt'; a: DeliveryAttempt }
  | { t: 'forget'; watch: string };

/** Compact when the journal has this many times the lines its state needs (and at least MIN_LINES). */
const COMPACT_RATIO = 4;
const MIN_LINES = 10_000;

interface WatchLog {
  /** Event ids, oldest first. */
  events: string[];
  /** Oldest first. */
  attempts: DeliveryAttempt[];
}

export class FileOutboxStore implements OutboxStore {
  private journal: JsonJournal | null = null;
  private readonly entries = new Map<string, OutboxEntry>();
  private readonly watches = new Map<string, WatchLog>();
  private readonly leases = new Map<string, number>();
  private compacting: Promise<void> | null = null;
  readonly file: string;

  constructor(
    alertsDir: string,
    private readonly onUnreadable: (file: string, lines: number) => void = () => undefined,
    /** The journal is never compacted below this many lines. */
    private readonly compactMinLines = MIN_LINES,
  ) {
    this.file = path.join(alertsDir, 'outbox', 'journal.jsonl');
  }

  async open(): Promise<Array<{ entry: string; at: Date }>> {
    const { journal, records, unreadable } = await JsonJournal.open<Line>(this.file);
    if (unreadable > 0) this.onUnreadable(this.file, unreadable);
    for (const line of records) this.apply(line);
    this.journal = journal;
    return [...this.entries.values()]
      .filter((e) => e.status === 'pending')
      .map((e) => ({ entry: queueEntry(e.event.id, e.turn), at: new Date(e.next_attempt_at ?? e.window_start) }));
  }

  async add(events: AlertEvent[], now: Date, queue: TaskQueue): Promise<AlertEvent[]> {
    const lines: Line[] = [];
    const added: AlertEvent[] = [];
    const seen = new Set<string>();
    for (const event of events) {
      if (this.entries.has(event.id) || seen.has(event.id)) continue;
      seen.add(event.id);
      const at = now.toISOString();
      const e: OutboxEntry = {
        event,
        status: 'pending',
        attempts: 0,
        next_attempt_at: at,
        delivered_at: null,
        turn: 1,
        window_start: at,
        window_attempts: 0,
      };
      lines.push({ t: 'add', e });
      added.push(event);
    }
    await this.write(lines);
    for (const e of added) await queue.enqueue(queueEntry(e.id, 1));
    return added;
  }

  async lease(eventId: string, turn: number, now: Date, leaseMs: number): Promise<Lease> {
    const e = this.entries.get(eventId);
    if (!e || e.turn !== turn || e.status !== 'pending') return { skip: true };
    const held = this.leases.get(eventId) ?? 0;
    if (held > now.getTime()) return { busyUntil: new Date(held) };
    this.leases.set(eventId, now.getTime() + leaseMs);
    return { entry: structuredClone(e) };
  }

  async record(eventId: string, turn: number, s: AttemptResult, queue: TaskQueue): Promise<void> {
    this.leases.delete(eventId);
    const e = this.entries.get(eventId);
    const lines: Line[] = [{ t: 'attempt', a: s.attempt }];
    let retry: string | null = null;
    if (e && (e.turn === turn || s.status === 'delivered')) {
      const st = stateOf(e);
      st.attempts++;
      st.window_attempts++;
      st.status = s.status;
      if (s.status === 'delivered') st.delivered_at = s.attempt.at;
      st.next_attempt_at = s.next_attempt_at?.toISOString() ?? null;
      if (s.next_attempt_at) retry = queueEntry(eventId, ++st.turn);
      lines.push({ t: 'set', id: eventId, s: st });
    } else if (e) {
      // Redelivered meanwhile: the newer turn decides the state; the attempt still counts.
      lines.push({ t: 'set', id: eventId, s: { ...stateOf(e), attempts: e.attempts + 1 } });
    }
    await this.write(lines);
    if (retry) await queue.enqueue(retry, s.next_attempt_at!);
  }

  async park(eventId: string, turn: number): Promise<void> {
    this.leases.delete(eventId);
    const e = this.entries.get(eventId);
    if (!e || e.turn !== turn || e.status !== 'pending') return;
    await this.write([{ t: 'set', id: eventId, s: { ...stateOf(e), status: 'paused', next_attempt_at: null } }]);
  }

  async requeue(watchId: string, eventId: string | null, now: Date, queue: TaskQueue): Promise<EventState[]> {
    const ids = eventId === null ? (this.watches.get(watchId)?.events ?? []) : [eventId];
    const chosen = ids
      .map((id) => this.entries.get(id))
      .filter((e): e is OutboxEntry => !!e && e.event.watch_id === watchId && (eventId !== null || e.status === 'paused'));
    const at = now.toISOString();
    const lines: Line[] = chosen.map((e) => ({
      t: 'set',
      id: e.event.id,
      s: { ...stateOf(e), status: 'pending', next_attempt_at: at, turn: e.turn + 1, window_start: at, window_attempts: 0 },
    }));
    await this.write(lines);
    // write() applied the lines: each entry now has its new turn and state.
    for (const e of chosen) await queue.enqueue(queueEntry(e.event.id, e.turn));
    return chosen.map(publicState);
  }

  async events(watchId: string, limit: number): Promise<EventState[]> {
    const ids = this.watches.get(watchId)?.events ?? [];
    return ids
      .slice(-limit)
      .reverse()
      .map((id) => publicState(this.entries.get(id)!));
  }

  async attempts(watchId: string, limit: number): Promise<DeliveryAttempt[]> {
    return (this.watches.get(watchId)?.attempts ?? []).slice(-limit).reverse();
  }

  async lastDeliveredAt(watchId: string): Promise<Date | null> {
    let last: string | null = null;
    for (const id of this.watches.get(watchId)?.events ?? []) {
      const d = this.entries.get(id)!.delivered_at;
      if (d && (!last || d > last)) last = d;
    }
    return last ? new Date(last) : null;
  }

  async forget(watchId: string): Promise<void> {
    if (!this.watches.has(watchId)) return;
    await this.write([{ t: 'forget', watch: watchId }]);
  }

  /** From memory, which holds every waiting event (only finished ones are trimmed). */
  async countWaiting(): Promise<WaitingCounts> {
    const n: WaitingCounts = { pending: 0, paused: 0 };
    for (const e of this.entries.values()) if (e.status === 'pending' || e.status === 'paused') n[e.status]++;
    return n;
  }

  async close(): Promise<void> {
    await this.compacting;
    await this.journal?.close();
    this.journal = null;
  }

  /** Apply the lines to memory, then make them durable (memory first: a compaction taken meanwhile includes them). */
  private async write(lines: Line[]): Promise<void> {
    if (lines.length === 0) return;
    if (!this.journal) throw new Error('the outbox is not open');
    for (const line of lines) this.apply(line);
    await this.journal.append(lines);
    this.maybeCompact();
  }

  private apply(line: Line): void {
    switch (line.t) {
      case 'add': {
        const id = line.e.event.id;
        if (this.entries.has(id)) return;
        this.entries.set(id, line.e);
        const w = this.watchLog(line.e.event.watch_id);
        w.events.push(id);
        this.trimEvents(w);
        return;
      }
      case 'set': {
        const e = this.entries.get(line.id);
        if (e) Object.assign(e, line.s);
        return;
      }
      case 'attempt': {
        // A deleted watch's late attempt is not kept.
        const w = this.watches.get(line.a.watch_id);
        if (!w) return;
        w.attempts.push(line.a);
        if (w.attempts.length > ATTEMPTS_KEPT) w.attempts.splice(0, w.attempts.length - ATTEMPTS_KEPT);
        return;
      }
      case 'forget': {
        for (const id of this.watches.get(line.watch)?.events ?? []) {
          this.entries.delete(id);
          this.leases.delete(id);
        }
        this.watches.delete(line.watch);
      }
    }
  }

  private watchLog(watchId: string): WatchLog {
    let w = this.watches.get(watchId);
    if (!w) this.watches.set(watchId, (w = { events: [], attempts: [] }));
    return w;
  }

  /** Past EVENTS_KEPT, the oldest finished events go; pending and waiting ones stay until they finish. */
  private trimEvents(w: WatchLog): void {
    let excess = w.events.length - EVENTS_KEPT;
    if (excess <= 0) return;
    w.events = w.events.filter((id) => {
      const e = this.entries.get(id)!;
      if (excess > 0 && (e.status === 'delivered' || e.status === 'failed')) {
        excess--;
        this.entries.delete(id);
        return false;
      }
      return true;
    });
  }

  private maybeCompact(): void {
    const live = this.entries.size + [...this.watches.values()].reduce((n, w) => n + w.attempts.length, 0);
    if (this.compacting || !this.journal || this.journal.lines < Math.max(this.compactMinLines, COMPACT_RATIO * live)) return;
    const lines: Line[] = [];
    for (const w of this.watches.values()) {
      for (const id of w.events) lines.push({ t: 'add', e: this.entries.get(id)! });
      for (const a of w.attempts) lines.push({ t: 'attempt', a });
    }
    // Taken synchronously after the appends so far: the rewrite holds exactly their state.
    this.compacting = this.journal.compact(lines).finally(() => (this.compacting = null));
  }
}

function stateOf(e: OutboxEntry): StateFields {
  const { event: _event, ...s } = e;
  return { ...s };
}
