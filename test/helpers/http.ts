// One HTTP call to a running server, the answer parsed as JSON when it is JSON.
export interface CallOptions {
  key?: string | null;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

export async function callApi(baseUrl: string, defaultKey: string, method: string, path: string, opts: CallOptions = {}) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key !== null) headers['x-api-key'] = opts.key ?? defaultKey;
  if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
