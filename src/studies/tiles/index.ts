/** The tiles study (`h2lab study tiles`), whole: its descriptor and the study the registry loads. */
export { TILES_STUDY } from './descriptor.ts';
export { tilesStudy } from './run.ts';
