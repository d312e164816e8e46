// Group commit for PostgreSQL: operations that arrive while a batch is being committed wait and
// go together in the next one, so a busy replica pays one round trip and one WAL flush for many
// holds and settlements instead of one each (the file ledger's segment log does the same with
// fdatasync). At most `maxInFlight` batches run at once: one per account-row lock they would
// otherwise queue on, more when traffic spreads over many accounts.
export class Batcher<Op, Result> {
  private queue: Array<{ op: Op; resolve: (r: Result) => void; reject: (e: unknown) => void }> = [];
  private running = 0;

  constructor(
    private readonly commit: (ops: Op[]) => Promise<Result[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
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

  private pump(): void {
    while (this.running < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
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
