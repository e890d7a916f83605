/** The soak's knobs: `npm run bench -- soak [--duration 10m] [--rate N] [--vus N] [--users N] [--warmup 2m] [--chaos]`; the rate defaults to what this machine sustains. */

export interface SoakOptions {
  durationS: number;
  warmupS: number;
  rate: number;
  vus: number;
  users: number;
  chaos: boolean;
}

/** `1m`, `90s`, `10m`, `1h30m` or plain seconds. */
export function parseDuration(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!m || !text) throw new Error(`not a duration: "${text}" (use e.g. 90s, 5m, 1h)`);
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** `defaultRate`: the rate when neither --rate nor BENCH_SOAK_RATE is given (bench/soak/sustainableRate.ts derives it). */
export function parseSoakArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, defaultRate = 2): SoakOptions {
  const given: Record<string, string> = {};
  let chaos = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--chaos') {
      chaos = true;
      continue;
    }
    const m = /^--(duration|rate|vus|users|warmup)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown soak option ${arg} (known: --duration, --rate, --vus, --users, --warmup, --chaos)`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    given[m[1]] = value;
  }
  const durationS = parseDuration(given.duration ?? env.BENCH_SOAK_DURATION ?? '10m');
  if (durationS < 30) throw new Error('--duration must be at least 30s');
  // a fifth of the run, at least what a short run needs and at most 10 minutes: a Node process's RSS settles over the
  // first minutes (V8 sizes its heap spaces, optimised code accumulates, pools and the listing and session caches
  // fill), and the RSS target measures growth from the end of warm-up
  const warmupS = given.warmup ? parseDuration(given.warmup) : Math.min(600, Math.round(durationS / 5));
  if (warmupS >= durationS) throw new Error('--warmup must be shorter than --duration');
  const number = (name: string, fallback: number, min: number, max: number) => {
    const n = Number(given[name] ?? fallback);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return n;
  };
  return {
    durationS,
    warmupS,
    rate: number('rate', Number(env.BENCH_SOAK_RATE ?? defaultRate), 0.1, 200),
    vus: Math.round(number('vus', Number(env.BENCH_SOAK_VUS ?? 100), 1, 2000)),
    users: Math.round(number('users', Number(env.BENCH_SOAK_USERS ?? 30), 1, 1000)),
    chaos,
  };
}
