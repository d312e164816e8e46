// Is an error PostgreSQL being out of reach (down, restarting, the network between), rather than a
// query it refused? Such an error says nothing about the request that met it: the caller may
// retry once the database is back (a 503 with Retry-After to a client, a write kept to be made
// again), where a refused query is a bug or a constraint and is answered as such.

/** Socket errors of a connection that cannot be made or was cut. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/**
 * SQLSTATEs of a server going away or not taking connections: class 08 (connection exception),
 * 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now: starting or stopping).
 */
const SQLSTATES = /^(08...|57P0[123])$/;
/** node-postgres' own words for a connection it lost, could not open in time, or that gave no answer in time (query_timeout). */
const PG_MESSAGES = /connection terminated|timeout exceeded when trying to connect|not queryable|connection error|query read timeout/i;

export function isConnectionLoss(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (SOCKET_CODES.has(e.code) || SQLSTATES.test(e.code))) return true;
  if (typeof e.message === 'string' && PG_MESSAGES.test(e.message) && !('severity' in e)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isConnectionLoss(x, depth + 1))) return true;
  return isConnectionLoss(e.cause, depth + 1);
}
