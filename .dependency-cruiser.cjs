// The layer rules (README, "Layout"): imports point down only.
//   core/      <- everything; imports nothing of ours but core/; its folders in rows (below)
//   ledger/    <- serve/, app/; imports core/
//   pipeline/  <- app/; imports core/; one stage's folder never reaches into another's (every folder but the shared ones)
//   serve/     <- app/; imports core/ and ledger/, never pipeline/
//   app/       the entry that runs pipeline and server together
//   fixtures/  the corpus generator; imports core/
//   bench/ and test/ may import the product and tools/, never each other
//   tools/     developer tools (embedded PostgreSQL, the browser, wasm build, UI shots) may import the
//              product; nothing in the product imports them, only tests and benches
// No import cycles anywhere (no-circular), type-only imports included.
//
// Inside core/, its folders in rows, bottom -> top: a folder imports only folders on rows below its own,
// never one beside it (and a new folder takes its row before it imports core/).
//   infra                      plumbing: configuration, logs, files, locks, DuckDB, PostgreSQL, worker threads;
//                              it knows nothing of posts, words or vectors
//   stats, snapshots           numbers alone (seeded random, k-means steps and k-means++ starts, tests, metrics);
//                              the published data's layout (post schema, generations, segments, windows)
//   text                       words: the analyzer, language, abuse, repair, readability
//   vectors, enrichment, maps  the embedder and vector spaces; per-post scores (tone, emotion, brands, keywords);
//                              a group of posts' labels, descriptions, series and figures
//   clustering, ranking        groups of posts (k-means by silhouette, stories: their words are maps' label
//                              words); the search index and ranking
//
// Inside serve/, its folders in rows, bottom -> top: a folder imports only folders on rows below
// its own, never one beside it; app.ts, server.ts and main.ts above them all (nothing imports them).
//   queue                      a queue of tasks run a few at a time, in memory or pg-boss: what jobs and
//                              webhook deliveries are worked by (it knows neither)
//   http                       request utilities only: errors and their shape, query and body rules,
//                              auth, rate limit, Idempotency-Key
//   generation                 a loaded generation (its data only: index, content, maps) and the snapshot store
//   search                     the search engine (its interface; the worker pool with its answer and graph
//                              workers, the in-thread engine), answers, the answer cache, emergent narratives, the /search body rule
//   maps, billing, media,      free map reads (emergent narratives from search); prices, holds, GET /billing/prices;
//   account                    media reads; usage and health
//   jobs                       asynchronous jobs (their analyses reuse search's narrative and pattern parts)
//   search-route, alerts       POST /search (a search over budget is handed to a job); watches, evaluation, delivery
//   metrics                    GET /metrics (reads jobs, alerts, search)
//   mcp, openapi, ui           the MCP tools and the OpenAPI document (each concern's schemas); the dashboard's files
// `npm test` runs this (test/fast/layers.test.ts), so a wrong-way import fails the suite.
const CORE_ORDER = [['infra'], ['stats', 'snapshots'], ['text'], ['vectors', 'enrichment', 'maps'], ['clustering', 'ranking']];
// pipeline/'s folders: every one is a stage's (stage-list.ts runs them), except those of what the stages share
// (PIPELINE_SHARED). A new folder is a stage's, kept apart from the others, unless it is listed here.
//   run/ (the runner, CLI, schedule, stage list), context/ (the stage context), store/ (the work store, row tables),
//   segments/ (the segment plan, planned rows), maps/ (the map stages' skeleton: narratives, patterns)
const PIPELINE_SHARED = ['run', 'context', 'store', 'segments', 'maps'];
const NOT_SHARED = `(?!(?:${PIPELINE_SHARED.join('|')})/)`;
const SERVE_ORDER = [
  ['queue'],
  ['http'],
  ['generation'],
  ['search'],
  ['maps', 'billing', 'media', 'account'],
  ['jobs'],
  ['search-route', 'alerts'],
  ['metrics'],
  ['mcp', 'openapi', 'ui'],
];

/**
 * One rule per folder of `root`/ in `order` (its rows, bottom first): it imports its own folder and those on the
 * rows below, nothing else of `root`/; and one rule that a folder not in `order` imports nothing of `root`/.
 */
function rowRules(root, order) {
  const listed = order.flat();
  const perFolder = order.flatMap((row, i) =>
    row.map((folder) => {
      const allowed = [folder, ...order.slice(0, i).flat()];
      return {
        name: `${root}-order-${folder}`,
        severity: 'error',
        comment: `${root}/${folder}/ may import ${root}/${allowed.join(`/, ${root}/`)}/ only (the order at the top of this file)`,
        from: { path: `^${root}/${folder}/` },
        to: { path: `^${root}/`, pathNot: `^${root}/(${allowed.join('|')})/` },
      };
    }),
  );
  const unlisted = {
    name: `${root}-folder-in-order`,
    severity: 'error',
    comment: `a new ${root}/ folder takes its row in ${root.toUpperCase()}_ORDER (the order at the top of this file) before it imports ${root}/`,
    from: { path: `^${root}/[^/]+/`, pathNot: `^${root}/(${listed.join('|')})/` },
    to: { path: `^${root}/` },
  };
  return [...perFolder, unlisted];
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-is-the-bottom',
      severity: 'error',
      comment: 'core/ is shared by everything and imports nothing of ours above it',
      from: { path: '^core/' },
      to: { path: '^(ledger|pipeline|serve|app|fixtures|bench|test)/' },
    },
    ...rowRules('core', CORE_ORDER),
    {
      name: 'ledger-on-core-only',
      severity: 'error',
      comment: 'the ledger stands on core/ alone',
      from: { path: '^ledger/' },
      to: { path: '^(pipeline|serve|app|fixtures|bench|test)/' },
    },
    {
      name: 'pipeline-on-core-only',
      severity: 'error',
      comment: 'the pipeline stands on core/ alone',
      from: { path: '^pipeline/' },
      to: { path: '^(ledger|serve|app|fixtures|bench|test)/' },
    },
    {
      name: 'serve-not-on-pipeline',
      severity: 'error',
      comment: 'the server reads published snapshots; what it shares with the pipeline lives in core/',
      from: { path: '^serve/' },
      to: { path: '^(pipeline|app|fixtures|bench|test)/' },
    },
    {
      name: 'stages-apart',
      severity: 'error',
      comment: "a stage does not reach into another stage's folder; what two stages share lives in pipeline/ or core/",
      from: { path: `^pipeline/${NOT_SHARED}([^/]+)/` },
      to: { path: `^pipeline/${NOT_SHARED}[^/]+/`, pathNot: '^pipeline/$1/' },
    },
    {
      name: 'pipeline-shared-under-stages',
      severity: 'error',
      comment: "what the stages share (pipeline/'s shared folders but run/, which runs them) imports no stage's folder",
      from: { path: `^pipeline/(${PIPELINE_SHARED.filter((f) => f !== 'run').join('|')})/` },
      to: { path: `^pipeline/${NOT_SHARED}[^/]+/` },
    },
    {
      name: 'fixtures-on-core-only',
      severity: 'error',
      comment: 'the corpus generator stands on core/ alone',
      from: { path: '^fixtures/' },
      to: { path: '^(ledger|pipeline|serve|app|bench|test)/' },
    },
    {
      name: 'tests-not-on-bench',
      severity: 'error',
      comment: 'tests do not import benchmark code (what both need lives in the product or a test helper)',
      from: { path: '^test/' },
      to: { path: '^bench/' },
    },
    { name: 'bench-not-on-tests', severity: 'error', from: { path: '^bench/' }, to: { path: '^test/' } },
    ...rowRules('serve', SERVE_ORDER),
    {
      name: 'product-not-on-tools',
      severity: 'error',
      comment: 'tools/ is for developers, tests and benches; the product runs without it',
      from: { path: '^(core|ledger|pipeline|serve|app|fixtures)/' },
      to: { path: '^tools/' },
    },
    {
      name: 'tools-not-on-tests',
      severity: 'error',
      comment: 'tools/ stands on the product alone (tests and benches import tools/, not the other way)',
      from: { path: '^tools/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'no import cycles, type-only imports included: a loop is a layer that points both ways',
      from: {},
      to: { circular: true },
    },
    {
      name: 'app-is-the-top',
      severity: 'error',
      comment: 'nothing imports the application entry',
      from: { pathNot: '^app/' },
      to: { path: '^app/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|bench/peers|data)/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};
