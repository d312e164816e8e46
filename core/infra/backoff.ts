// Capped exponential backoff: how long to wait before the next try after `failures` failures in a
// row (1 = the first): first, 2 x first, 4 x first ... at most `max`. What `npm run cluster`'s
// supervisor waits between starts of a replica that keeps failing (app/replica-supervisor.ts).
export const backoffDelay = (failures: number, first: number, max: number) => Math.min(max, first * 2 ** Math.max(0, failures - 1));
