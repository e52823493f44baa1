// The same question asked by Chromium (Debian's package, driven over CDP): a burst of 40 tile requests
// over http:// (HTTP/1.1) and https:// (HTTP/2) against the fixture server h2lab starts itself.
import { measureBrowser, render } from 'h2lab';

const result = await measureBrowser({ count: 40, runs: 2, cancel: false, control: false });
console.log(render(result, 'text'));
console.log(`targets: ${result.targets.map((t) => t.label).join(', ')}`);
