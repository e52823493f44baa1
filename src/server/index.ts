/**
 * The fixture server (`h2lab serve`): HTTP/1.1 and h2c on a plain port, h2 and HTTP/1.1 by ALPN on a
 * TLS port, routes for load and browser experiments, a bounded cancel-aware backend pool and
 * Prometheus metrics.
 */

export { type MetricsSnapshot, POOL_BUCKETS_SECONDS, ROUTES, renderPrometheus } from './metrics.ts';
export {
  histogramQuantile,
  type MetricsTls,
  metricsClient,
  metricsDelta,
  metricsUrlOf,
  type ServerMetricsClient,
  serverViewOf,
} from './metrics-client.ts';
export {
  METRICS_URL_FLAG,
  type ServerOptionsInput,
  ServerOptionsSchema,
  serverOptionMeta,
} from './options.ts';
export {
  bodyChunks,
  fillerBody,
  ORIGIN_MAX_STREAMS,
  type OriginBody,
  type OriginListener,
  type OriginResource,
  type OriginServers,
  resolverRules,
  startOriginServers,
} from './origins.ts';
export { otherCpus, pinThisProcess, renderCpuList } from './render-cpu.ts';
export { type RunningServer, resolveServerOptions, startServer } from './server.ts';
export { DEFAULT_SITE, generateSite, parseSiteSpec, type SiteSpec, siteHost } from './site.ts';
export { type FixtureTarget, startFixtureTarget, withLinkedTarget } from './target.ts';
export { tilesPageHtml, tilesPageParams } from './tiles-page.ts';
