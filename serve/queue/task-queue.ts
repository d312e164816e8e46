// A queue of tasks run a few at a time: what asynchronous jobs (serve/jobs/) and webhook deliveries
// (serve/alerts/) are worked by, each with a queue of its own. A task is a string its owner reads
// (a job's id, an outbox entry). In one process (the default) a queue in memory, filled again by
// its owner from what it kept at a start (memory-task-queue.ts); with DATABASE_URL pg-boss on the
// same PostgreSQL (pg-task-queue.ts): any replica takes the next task, and a task whose replica
// died is taken again once its run expires.
/** Somewhere SQL runs: a connection inside a transaction (pg-boss's own shape for it). */
export interface SqlExecutor {
  executeSql(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

export interface TaskQueue {
  /** Start taking tasks; `run` must settle every task it is given (it never throws for a task's own failure). */
  start(run: (taskId: string) => Promise<void>): Promise<void>;
  /** Queue a task, to run now or not before `at` (a webhook's retry). */
  enqueue(taskId: string, at?: Date): Promise<void>;
  /** Queue inside the caller's transaction (a queue kept in PostgreSQL only). */
  enqueueIn?(db: SqlExecutor, taskId: string, at?: Date): Promise<void>;
  /** False when a queue with a bound holds as many tasks as it takes: its owner refuses new work (a 503). */
  hasRoom(): boolean;
  /** Tasks waiting and being run (/metrics): this process's in memory, every replica's with pg-boss. */
  depth(): Promise<{ queued: number; running: number }>;
  /** No new tasks start; resolves once the running ones finished. */
  close(): Promise<void>;
}
