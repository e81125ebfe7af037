export interface RetryOptions {
  attempts: number;
  delayMs: number;
  factor: number;
}

const defaults: RetryOptions = { attempts: 5, delayMs: 100, factor: 2 };

export async function retry<T>(
  task: () => Promise<T>,
  options: Partial<RetryOptions> = {},
): Promise<T> {
  const { attempts, delayMs, factor } = { ...defaults, ...options };
  let wait = delayMs;
  let lastError: unknown = undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await task();
    } catch (error: unknown) {
      lastError = error;
      console.warn(`attempt ${attempt} of ${attempts} failed`);
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * factor, 30_000);
    }
  }
  throw new Error("all attempts failed", { cause: lastError });
}
