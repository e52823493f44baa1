/**
 * Seeded randomness. Every random choice in h2lab (arrivals, URL picks, chunk sizes, loss) takes an
 * `Rng` so a run is reproducible from its `seed`. sfc32 seeded through splitmix32: fast, 128-bit state,
 * passes PractRand far beyond what a benchmark needs.
 */

/** A source of uniform doubles in [0, 1). */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** Exponentially distributed with the given mean (for Poisson arrivals). */
  exponential(mean: number): number;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * Creates a seeded generator. The same seed gives the same sequence on every platform.
 * @example const rng = createRng(42); rng.int(0, 63);
 */
export function createRng(seed: number): Rng {
  const init = splitmix32(seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    exponential: (mean) => -Math.log(1 - next()) * mean,
  };
}
