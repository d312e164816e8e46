// The operating system's id of the calling thread (Linux: /proc/thread-self -> "<pid>/task/<tid>"),
// so a thread's CPU can be read from /proc/<pid>/task/<tid>/stat by whoever watches the process
// (the api bench splits a search's CPU into the main thread's and the search workers'). Node has
// no API for it and names every thread "node". Null where /proc is not Linux's.
import fs from 'node:fs';

export function osThreadId(): number | null {
  try {
    const m = /\/task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
