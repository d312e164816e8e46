// Errors a handler throws to answer with a status and a JSON body; anything else is a 500 whose
// body names only the request id (the details go to the log, never to the client).
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.error === 'string' ? body.error : `HTTP ${status}`);
  }
}

export const badRequest = (error: string) => new HttpError(400, { error });
export const notFound = (error: string) => new HttpError(404, { error });
