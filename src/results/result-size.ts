/**
 * The largest result file `report`, `compare` and `merge` read unless
 * --max-result-size says otherwise, in MB (1,048,576 bytes). A saved run is
 * a few hundred kilobytes, a day-long one with its per-second timelines some
 * tens of megabytes; a file is read whole and parsed at several times its
 * size in memory, so a bigger one is refused by its size, before it is read
 * (report/results-store.ts). Its own module, free of imports: the flag's
 * help names it without loading the readers.
 */
export const DEFAULT_MAX_RESULT_MB = 64
