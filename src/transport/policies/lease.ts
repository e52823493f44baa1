import { type Choice, firstIdle, type PickContext } from './policy.ts';

/**
 * `lease`: one exchange per connection at a time, as a pool that leases an HTTP/2 connection like an
 * HTTP/1.1 one (Apache HttpClient 5's pooling manager; its HTTP/2 sharing came later, as an
 * experimental pool): an idle connection, else a new one up to K, else wait.
 */
export function lease(p: PickContext): Choice {
  return firstIdle(p.conns) ?? (p.canOpen ? 'open' : undefined);
}
