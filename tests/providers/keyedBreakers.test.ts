/**
 * Per-key circuit breakers (the local draft models' per-user breaker): one key's failures open only its breaker, and
 * the map stays bounded without forgetting an open breaker.
 */
import { CircuitBreakerError } from '../../providers/circuitBreaker';
import { KeyedCircuitBreakers } from '../../providers/keyedBreakers';

const fail = () => Promise.reject(new Error('boom'));
const ok = () => Promise.resolve('ok');

describe('KeyedCircuitBreakers', () => {
  it("opens only the failing key's breaker", async () => {
    const breakers = new KeyedCircuitBreakers('local:draftModels', { failureThreshold: 2 });
    for (let i = 0; i < 2; i += 1) await expect(breakers.for('a').execute(fail)).rejects.toThrow('boom');
    await expect(breakers.for('a').execute(ok)).rejects.toBeInstanceOf(CircuitBreakerError);
    await expect(breakers.for('b').execute(ok)).resolves.toBe('ok');
    expect(breakers.for('a').name).toBe('local:draftModels:a');
    expect([breakers.for('a').state, breakers.for('b').state]).toEqual(['OPEN', 'CLOSED']);
  });

  it('drops the least recently used idle breakers past its bound, never an open one', async () => {
    const breakers = new KeyedCircuitBreakers('x', { failureThreshold: 1 }, 3);
    await expect(breakers.for('open').execute(fail)).rejects.toThrow('boom');
    breakers.for('one');
    breakers.for('two');
    breakers.for('three');
    expect(breakers.size).toBe(3);
    // 'open' is the oldest but OPEN: kept; 'one' went
    expect(breakers.for('open').state).toBe('OPEN');
    expect(breakers.size).toBe(3);
  });
});
