// Imported first by bench/run.ts, before the harness loads the package: the benchmarks run the
// build in dist/, the files n8n loads (tools/run.js builds before benchmarking).
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
process.env.MGEN_HARNESS_SOURCE ??= 'dist';
