/**
 * What young-generation collections promote while `churn` runs: the old space's growth across it,
 * with the structure under test made old first (it survives collections while idle), as a
 * long-lived session's tables are in a real run. Minor collections only: a full one would free what
 * a chain of dead tables keeps (src/core/slots.ts), which is exactly what must not be needed.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as (o: { type: 'minor' | 'major' }) => void;

function oldSpaceBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
}

export async function promotedWhile(churn: () => void): Promise<number> {
  for (let i = 0; i < 3; i++) gc({ type: 'minor' });
  const before = oldSpaceBytes();
  churn();
  // Twice, a turn apart: what survives the first is promoted by the second.
  await new Promise((r) => setImmediate(r));
  gc({ type: 'minor' });
  await new Promise((r) => setImmediate(r));
  gc({ type: 'minor' });
  return oldSpaceBytes() - before;
}
