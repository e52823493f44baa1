// @peculiar/x509 (through tsyringe) needs the three Reflect metadata functions of the "reflect-metadata"
// proposal; this is the smallest stand-in, so the tests need no extra dependency. Import it before
// @peculiar/x509.
const store = new WeakMap<object, Map<string, unknown>>();
const key = (k: unknown, prop?: unknown): string => `${String(prop ?? '')}\u0000${String(k)}`;
const r = Reflect as unknown as Record<string, unknown>;
r.defineMetadata ??= (k: unknown, v: unknown, target: object, prop?: unknown) => {
  const m = store.get(target) ?? new Map<string, unknown>();
  store.set(target, m);
  m.set(key(k, prop), v);
};
r.getOwnMetadata ??= (k: unknown, target: object, prop?: unknown) => store.get(target)?.get(key(k, prop));
r.getMetadata ??= (k: unknown, target: object, prop?: unknown) => {
  for (let t: object | null = target; t; t = Object.getPrototypeOf(t)) {
    const v = store.get(t)?.get(key(k, prop));
    if (v !== undefined) return v;
  }
  return undefined;
};
