// Results are data: a run written as JSON and read back through the model's schema, and the JSON
// Schemas h2lab publishes for every result kind.
import { parseRunResult, publishedJsonSchemas, RUN_RESULT_VERSION, runLoad } from 'h2lab';

const result = await runLoad({ url: '/bytes/100', protocol: 'h1', requests: 200 }).done;
const text = JSON.stringify(result);
const back = parseRunResult(JSON.parse(text));
console.log(`a ${back.kind} v${RUN_RESULT_VERSION}: ${back.counts.ok} ok, ${text.length} bytes of JSON`);
console.log(Object.keys(publishedJsonSchemas()).sort().join(', '));
