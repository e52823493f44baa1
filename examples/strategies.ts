// The strategy registry: what each built-in strategy declares, and one more registered from a
// script (one HTTP/1.1 connection, every request queued behind the previous one) run against the
// fixture server.
import { getStrategy, listStrategies, registerStrategy, runLoad, startServer } from 'h2lab';

for (const s of listStrategies()) console.log(`${s.name.padEnd(8)} ${s.describe('6')}`);

const h1 = getStrategy('h1');
const unregister = registerStrategy({
  ...h1,
  name: 'h1-single',
  summary: 'one HTTP/1.1 connection',
  describe: () => 'HTTP/1.1, exactly one connection',
  colour: '#7a5195',
  baseline: false,
  connections: { unit: 'connection', fixed: 1 },
});
const server = await startServer({ port: 0 });
try {
  const result = await runLoad({
    url: `${server.plainUrl}/bytes/512`,
    protocol: 'h1-single',
    concurrency: 4,
    durationMs: 500,
  }).done;
  console.log(`h1-single: ${result.connections.opened} connection, ${result.counts.ok} ok`);
} finally {
  unregister();
  await server.close();
}
console.log(
  listStrategies()
    .map((s) => s.name)
    .join(', '),
);
