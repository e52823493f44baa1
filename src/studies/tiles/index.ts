export { tilesStudy } from './run.ts';
