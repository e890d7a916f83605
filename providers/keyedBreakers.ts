/**
 * One circuit breaker per key (for the local draft models: per user), so one caller's failing inputs open only that
 * caller's breaker. A local model runs on this worker's own CPU: when it fails or runs out of time, the input is the
 * likelier cause than the "provider", and a shared breaker would turn one user's bad file into a minute of failures
 * for everyone. The map is bounded: past `maxKeys`, the least recently used breaker that is CLOSED with no recent
 * failure is dropped (an OPEN one is kept, so waiting is the only way past it).
 */
import { CircuitBreaker, type CircuitBreakerOptions } from './circuitBreaker';

export const DEFAULT_MAX_BREAKER_KEYS = 10_000;

export class KeyedCircuitBreakers {
  private readonly breakers = new Map<string, CircuitBreaker>();

  constructor(
    /** The breakers' name prefix; each is named `<prefix>:<key>`. */
    readonly prefix: string,
    private readonly options: Partial<CircuitBreakerOptions> = {},
    private readonly maxKeys = DEFAULT_MAX_BREAKER_KEYS,
  ) {}

  /** The key's breaker, made on first use. */
  for(key: string): CircuitBreaker {
    let breaker = this.breakers.get(key);
    if (breaker) {
      // most recently used last
      this.breakers.delete(key);
    } else {
      breaker = new CircuitBreaker(`${this.prefix}:${key}`, this.options);
      this.evictIdle();
    }
    this.breakers.set(key, breaker);
    return breaker;
  }

  /** How many keys have a breaker now. */
  get size(): number {
    return this.breakers.size;
  }

  private evictIdle(): void {
    if (this.breakers.size < this.maxKeys) return;
    for (const [key, breaker] of this.breakers) {
      if (breaker.state === 'CLOSED' && breaker.recentFailures === 0) {
        this.breakers.delete(key);
        if (this.breakers.size < this.maxKeys) return;
      }
    }
  }
}
