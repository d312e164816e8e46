// The load the benches put on a running server: autocannon on POST /api/search, each request's
// body made from its sequence number (so clients cycle through the bench's queries).
import type autocannon from 'autocannon';

export function searchLoad(
  server: { baseUrl: string; key: string },
  connections: number,
  bodyOf: (i: number) => Record<string, unknown>,
): (duration: number) => autocannon.Options {
  const headers = { 'x-api-key': server.key, 'content-type': 'application/json' };
  let n = 0;
  return (duration) => ({
    url: server.baseUrl,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        path: '/api/search',
        headers,
        setupRequest: (req) => ({ ...req, body: JSON.stringify(bodyOf(n++)) }),
      },
    ],
  });
}
