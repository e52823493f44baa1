/** The chunks study (`h2lab study chunks`), whole: its descriptor and the study the registry loads. */
export { CHUNKS_STUDY } from './descriptor.ts';
export { chunksStudy } from './run.ts';
