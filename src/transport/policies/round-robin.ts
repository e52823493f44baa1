import { type Choice, hasRoom, type PickContext } from './policy.ts';

/** `round-robin`: K connections opened before the run; each in turn, skipping full ones. */
export function roundRobin(p: PickContext): Choice {
  if (p.canOpen) return 'open';
  const n = p.conns.length;
  for (let i = 0; i < n; i++) {
    const c = p.conns[(p.cursor + i) % n]!;
    if (!hasRoom(c)) continue;
    p.cursor = (p.cursor + i + 1) % n;
    return c;
  }
  return undefined;
}
