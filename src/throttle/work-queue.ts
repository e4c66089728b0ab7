/**
 * A bounded queue for expensive work (argon2 hashing): at most `concurrency` tasks run at once,
 * each client may have at most `perClient` tasks running or waiting, and at most `maxWaiting`
 * wait in all. Past those bounds a task is refused at once rather than queued, so one client's
 * burst costs another client a short wait, never minutes.
 */

export type Refusal = 'client-busy' | 'queue-full';

export class WorkRefused extends Error {
  override readonly name = 'WorkRefused';
  constructor(readonly reason: Refusal) {
    super(reason === 'client-busy' ? 'too many tasks for this client' : 'the queue is full');
  }
}

export interface WorkQueueLimits {
  readonly concurrency: number;
  readonly perClient: number;
  readonly maxWaiting: number;
}

export class WorkQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly perClient = new Map<string, number>();

  constructor(readonly limits: WorkQueueLimits) {}

  /** Runs `task` when a slot is free; rejects with WorkRefused when a bound is reached. */
  async run<T>(client: string, task: () => Promise<T>): Promise<T> {
    const mine = this.perClient.get(client) ?? 0;
    if (mine >= this.limits.perClient) throw new WorkRefused('client-busy');
    const mustWait = this.running >= this.limits.concurrency;
    if (mustWait && this.waiting.length >= this.limits.maxWaiting) {
      throw new WorkRefused('queue-full');
    }
    this.perClient.set(client, mine + 1);
    try {
      if (mustWait) await new Promise<void>((resolve) => this.waiting.push(resolve));
      else this.running++;
      try {
        return await task();
      } finally {
        // The slot passes straight to the next waiter, so `running` stays counted for it.
        const next = this.waiting.shift();
        if (next) next();
        else this.running--;
      }
    } finally {
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left === 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    }
  }
}
