export { requestStop, type StopWatch, watchStop } from './stop-watch.ts';
