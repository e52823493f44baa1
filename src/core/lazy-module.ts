/**
 * A dependency loaded on its first use instead of at start-up. Evaluating a package costs time every
 * command pays before its first line of output (`h2lab bench --help` spent 90 ms in hdr-histogram-js
 * and pako, 45 ms in yaml); a command that never records a histogram or reads a YAML file
 * should not pay it. Synchronous (`require`), so callers keep synchronous signatures; the packages
 * named here ship CommonJS for Node.
 */
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * A getter for the package `name`, loaded and cached on the first call. Type it with a type-only
 * import: `import type * as Yaml from 'yaml'; const yaml = lazyModule<typeof Yaml>('yaml');`.
 *
 * @example const yaml = lazyModule<typeof Yaml>('yaml'); yaml().parse('a: 1');
 */
export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= requireHere(name) as T;
    return loaded;
  };
}

/** What h2lab uses of hdr-histogram-js: building, encoding and decoding histograms. */
interface HdrHistogramLib {
  build: typeof import('hdr-histogram-js')['build'];
  encodeIntoCompressedBase64: typeof import('hdr-histogram-js')['encodeIntoCompressedBase64'];
  decodeFromCompressedBase64: typeof import('hdr-histogram-js')['decodeFromCompressedBase64'];
}

const hdrBuilder = lazyModule<Pick<HdrHistogramLib, 'build'>>('hdr-histogram-js/dist/HistogramBuilder');
const hdrEncoding = lazyModule<Omit<HdrHistogramLib, 'build'>>('hdr-histogram-js/dist/encoding');
let hdrLib: HdrHistogramLib | undefined;

/**
 * hdr-histogram-js, loaded on first use from the two modules h2lab needs. Its index also loads
 * `HistogramLogWriter`, which builds an `Intl.NumberFormat` at load time (ICU data: 10–30 ms of a
 * run's CPU in a profile) for a log format h2lab never writes.
 */
export function hdrHistogram(): HdrHistogramLib {
  if (!hdrLib) {
    const e = hdrEncoding();
    hdrLib = {
      build: hdrBuilder().build,
      encodeIntoCompressedBase64: e.encodeIntoCompressedBase64,
      decodeFromCompressedBase64: e.decodeFromCompressedBase64,
    };
  }
  return hdrLib;
}
