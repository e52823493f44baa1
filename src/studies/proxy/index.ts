/** The proxy study (`h2lab study proxy`), whole: its descriptor and the study the registry loads. */
export { PROXY_STUDY } from './descriptor.ts';
export { proxyStudy } from './run.ts';
