// Recovery (docs/ledger.md, "Recovery"): the ledger's state rebuilt from disk when it opens, after
// a clean stop or a crash alike. Load the last checkpoint, if there is a readable one that lines up
// with the log; open the log files, verifying every frame's checksum and cutting a torn tail; replay
// the records after the checkpoint through the same `apply` live writes use. The ledger then
// releases every hold still open (Ledger.open): their requests died with the process.
import { loadCheckpoint } from './checkpoint.ts';
import { decodeRecord } from './records.ts';
import { RecordLog, type TornTail } from './record-log.ts';
import { LedgerState } from './state.ts';

export interface RecoveryReport {
  ms: number;
  records: number;
  fromCheckpoint: boolean;
  checkpointError: string | null;
  replayed: number;
  tornTail: TornTail | null;
  releasedHolds: number;
}

export async function recoverLog(
  dir: string,
  options: { fileBytes?: number; groupCommit?: boolean },
): Promise<{ state: LedgerState; log: RecordLog; report: RecoveryReport }> {
  const cp = await loadCheckpoint(dir);
  const fromCheckpoint = cp !== null && 'state' in cp;
  let state = fromCheckpoint ? cp.state : new LedgerState();
  let opened = await RecordLog.open(dir, options, fromCheckpoint ? cp.location : 0);
  // A checkpoint that does not line up with the log (the log lost fsynced data, or files were
  // copied around) is not trusted: replay the whole log instead.
  const first = opened.records[0];
  const misaligned = first
    ? decodeRecord(first.payload).seq !== state.lastSeq + 1
    : opened.log.nextLocation() < (fromCheckpoint ? cp.location : 0);
  if (fromCheckpoint && misaligned) {
    await opened.log.close();
    state = new LedgerState();
    opened = await RecordLog.open(dir, options, 0);
  }
  for (const r of opened.records) state.apply(decodeRecord(r.payload), r.location);
  const report: RecoveryReport = {
    ms: 0,
    records: state.lastSeq,
    fromCheckpoint,
    checkpointError: cp && 'error' in cp ? cp.error : null,
    replayed: opened.records.length,
    tornTail: opened.tornTail,
    releasedHolds: 0,
  };
  return { state, log: opened.log, report };
}
