/* DuckDB-WASM's main module imports Apache Arrow by its package name ("apache-arrow"). The SQL
   page maps that name here with an import map, and this module hands over the Arrow build the
   page loaded just before (assets/duckdb/arrow.min.js, which sets globalThis.Arrow), so no
   bundler is needed. It exports what duckdb-browser.mjs of the pinned version uses; the browser
   test runs a query through it, so a version that needs more fails there. */
const Arrow = globalThis.Arrow;
if (!Arrow) {
  throw new Error("Apache Arrow (assets/duckdb/arrow.min.js) did not load");
}
export const { RecordBatchReader, Table, tableToIPC, Type } = Arrow;
