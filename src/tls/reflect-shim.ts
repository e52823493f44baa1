/**
 * The three `Reflect` metadata functions that `tsyringe` (a dependency of `@peculiar/x509`) checks for
 * at load time. `@peculiar/x509` never emits decorator metadata, so a small per-target store is all
 * it needs; this avoids a `reflect-metadata` dependency. Import this module before `@peculiar/x509`.
 */
type Store = Map<unknown, unknown>;
const stores = new WeakMap<object, Store>();
const R = Reflect as unknown as Record<string, unknown>;
if (typeof R.getMetadata !== 'function') {
  const own = (key: unknown, target: object): unknown => stores.get(target)?.get(key);
  R.getOwnMetadata = own;
  R.getMetadata = (key: unknown, target: object): unknown => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t)) {
      const v = own(key, t);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  R.defineMetadata = (key: unknown, value: unknown, target: object): void => {
    let s = stores.get(target);
    if (!s) {
      s = new Map();
      stores.set(target, s);
    }
    s.set(key, value);
  };
}

export {};
