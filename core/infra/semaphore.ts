// A counting semaphore: at most `max` async tasks past acquire() at once (bounded concurrency
// of sharp decodes in the media and visual-feature workers).
interface Semaphore {
  acquire(): Promise<void>;
  release(): void;
}

export function semaphore(max: number): Semaphore {
  let active = 0;
  const waiting: Array<() => void> = [];
  return {
    async acquire() {
      while (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
      active++;
    },
    release() {
      active--;
      waiting.shift()?.();
    },
  };
}
