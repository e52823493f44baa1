export { chunksStudy } from './run.ts';
