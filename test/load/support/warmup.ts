/**
 * Launches a benchmark makes before the ones it measures for figure 2. A fresh process pays its
 * first launches twice over (V8 compiles the launch path's functions as they get hot, pools open
 * and prepare their statements): on 2 cores the first 25 launches after start-up took ~100 ms of
 * service CPU each, launches 75–200 ~50 and later ones ~35–50, with POST → model request p50
 * ~40 → ~23–28 ms (`launch-path.ts`, which prints the curve; docs/decisions/0050). The measured
 * launches are what a replica that has been serving pays; the first slice is reported apart.
 */
export const WARMUP_LAUNCHES = 200;
/** Launches per slice of a warm-up curve; the first slice is the cold figure. */
export const WARMUP_SLICE = 25;
