// Group commit for PostgreSQL: operations that arrive while a batch is being committed wait and
// go together in the next one, so a busy replica pays one round trip and one WAL flush for many
// holds and settlements instead of one each (the file ledger's record log does the same with
// fdatasync). At most `maxInFlight` batches run at once: one per account-row lock they would
// otherwise queue on, more when traffic spreads over many accounts. Operations with the same
// `apart` key (two on one hold) never share a batch: the later waits for the next one, where it
// sees the earlier's outcome.
export class Batcher<Op, Result> {
  private queue: Array<{ op: Op; resolve: (r: Result) => void; reject: (e: unknown) => void }> = [];
  private running = 0;

  constructor(
    private readonly commit: (ops: Op[]) => Promise<Result[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
    private readonly apart: (op: Op) => string | null = () => null,
  ) {}

  submit(op: Op): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.pump();
    });
  }

  get idle(): boolean {
    return this.running === 0 && this.queue.length === 0;
  }

  private take(): typeof this.queue {
    const batch: typeof this.queue = [];
    const keys = new Set<string>();
    const left: typeof this.queue = [];
    for (const q of this.queue) {
      const k = this.apart(q.op);
      if (batch.length >= this.maxBatch || (k !== null && keys.has(k))) left.push(q);
      else {
        if (k !== null) keys.add(k);
        batch.push(q);
      }
    }
    this.queue = left;
    return batch;
  }

  private pump(): void {
    while (this.running < this.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.running++;
      this.commit(batch.map((b) => b.op))
        .then(
          (results) => batch.forEach((b, i) => b.resolve(results[i]!)),
          (err) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }
}
