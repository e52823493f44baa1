export { proxyStudy } from './run.ts';
