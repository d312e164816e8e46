// A data directory the pipeline refuses to start (issue 46): no generation published, no working
// store, nothing landed. That is a mistyped --data-dir or DATA_DIR far more often than a wish for
// an empty snapshot, and running would create the folder and publish a generation of 0 posts that
// a server then serves. `--init` starts an empty one on purpose.
import fs from 'node:fs';
import type { DataDirLayout } from '../../core/infra/data-dir.ts';

/** Whether `dir` holds a file at any depth (a missing folder holds none). */
function holdsFile(dir: string): boolean {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  return entries.some((e) => e.isFile() || (e.isDirectory() && holdsFile(`${dir}/${e.name}`)));
}

/** Why the pipeline should not run on this data directory, or null when it may. */
export function emptyDataDirProblem(layout: DataDirLayout): string | null {
  if (fs.existsSync(layout.current) || fs.existsSync(layout.work) || holdsFile(layout.landing)) return null;
  return (
    `${layout.root} is not a data directory yet: no generation published and no file in ${layout.landing}; ` +
    'check --data-dir (or DATA_DIR), put posts in its landing/ folder, or pass --init to start an empty one'
  );
}
