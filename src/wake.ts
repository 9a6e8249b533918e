/**
 * The wake gate: idle worker slots wait here instead of polling the server. A message on the
 * queue's wake channel carries how many jobs the transition made ready and releases that many
 * waiters; a slot that claimed a job releases one more (the queue may hold more work), so a burst
 * ramps every idle slot up; a slow safety tick releases one waiter in case a message was missed.
 */
export class WakeGate {
  private readonly waiters: (() => void)[] = [];
  private tick: NodeJS.Timeout | undefined;
  /** Wakes that found no waiter, kept (up to `maxPermits`) so a slot about to wait does not miss them. */
  private permits = 0;
  /** Whether the safety tick runs while slots wait. */
  private ticking = true;

  constructor(
    private readonly safetyTickMs: number,
    private readonly maxPermits: number,
  ) {}

  /**
   * Resolves when woken, on close, or — with `timeoutMs` — once that much time has passed (a slot
   * backing off after an error waits this way, so a wake or a busy peer still releases it early).
   */
  wait(timeoutMs?: number): Promise<void> {
    if (this.permits > 0) {
      this.permits -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = () => {
        clearTimeout(timer);
        resolve();
      };
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at !== -1) this.waiters.splice(at, 1);
          if (this.waiters.length === 0) this.disarm();
          resolve();
        }, timeoutMs);
      }
      this.waiters.push(waiter);
      this.arm();
    });
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** `count` jobs became ready: release that many waiters; keep the rest as permits. */
  wake(count = 1): void {
    let left = Math.max(1, Math.floor(count));
    while (left > 0 && this.waiters.length > 0) {
      this.waiters.shift()!();
      left -= 1;
    }
    this.permits = Math.min(this.permits + left, this.maxPermits);
    if (this.waiters.length === 0) this.disarm();
  }

  /** Releases one waiter if one waits; keeps no permit (a busy slot's hint, not a wake). */
  releaseOne(): void {
    this.waiters.shift()?.();
    if (this.waiters.length === 0) this.disarm();
  }

  wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
    this.disarm();
  }

  /**
   * Turns the safety tick off (or on again). Off while a blocking claim waits inside the server
   * for the queue: it sees every job that becomes ready, so no missed message can strand one.
   */
  setTicking(on: boolean): void {
    this.ticking = on;
    if (!on) this.disarm();
    else if (this.waiters.length > 0) this.arm();
  }

  private arm(): void {
    if (this.tick || !this.ticking) return;
    this.tick = setInterval(() => this.releaseOne(), this.safetyTickMs);
  }

  private disarm(): void {
    if (this.tick) clearInterval(this.tick);
    this.tick = undefined;
  }
}

/**
 * What a wake message says: its decimal count of jobs that became ready, `0` when an id entered
 * the schedule instead (due later; nothing to claim now), and 1 for any other message (a message
 * that is not ours still means "look once").
 */
export function wakeCount(message: string | Buffer): number {
  const text = String(message);
  if (text === "0") return 0;
  const n = Number(text);
  return Number.isSafeInteger(n) && n > 0 && /^[1-9]\d*$/.test(text) ? n : 1;
}
