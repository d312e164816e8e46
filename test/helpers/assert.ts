// uvu has no async "rejects": this one fails unless the promise rejects with a matching message.
import * as assert from 'uvu/assert';

export async function rejects(fn: () => Promise<unknown>, pattern: RegExp): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    assert.match((err as Error).message, pattern);
    return err as Error;
  }
  assert.unreachable(`expected a rejection matching ${pattern}`);
  throw new Error('unreachable');
}
