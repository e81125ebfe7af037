export class Scheduler<T> {
  private queue: T[] = [];

  public schedule(state: T, delay: number = 0): void {
    if (delay > 0) {
      setTimeout(() => this.queue.push(state), delay);
      return;
    }
    this.queue.push(state);
  }

  public drain(): T[] {
    const all = this.queue;
    this.queue = [];
    return all;
  }
}
