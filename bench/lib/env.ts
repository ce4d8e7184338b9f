// Imported first by bench/run.ts, before the harness loads the package: the benchmarks run the
// build in dist/, the files n8n loads (tools/run.js builds before benchmarking).
process.env.MGEN_HARNESS_SOURCE ??= 'dist';
