// Debian's nginx (a real server no one here wrote) for the probe and session tests: the launcher is
// src/studies/nginx.ts (the proxy study runs the same one); tests skip cleanly where nginx is absent.
import { findNginx, nginxVersion } from '../../src/studies/nginx.ts';

export { freePort, type Nginx, startNginx } from '../../src/studies/nginx.ts';

/** True when an nginx binary runs here. */
export function haveNginx(): boolean {
  const binary = findNginx();
  return binary !== undefined && nginxVersion(binary) !== undefined;
}
