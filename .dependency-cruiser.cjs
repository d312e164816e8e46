// The layer rules (README, "Layout"): imports point down only.
//   core/      <- everything; imports nothing of ours but core/. Inside it, infra/ (configuration, logs,
//              files, locks, DuckDB, PostgreSQL, worker threads) is under the domain folders (text/,
//              vectors/, ranking/, clustering/, enrichment/, maps/, stats/, snapshots/) and imports none of them
//   ledger/    <- serve/, app/; imports core/
//   pipeline/  <- app/; imports core/; one stage's folder never reaches into another's
//   serve/     <- app/; imports core/ and ledger/, never pipeline/
//   app/       the entry that runs pipeline and server together
//   fixtures/  the corpus generator; imports core/
//   bench/ and test/ may import the product, never each other
// `npm test` runs this (test/fast/layers.test.ts), so a wrong-way import fails the suite.
const STAGES = 'ingest|features|indexes|narratives|patterns|publish';

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
    {
      name: 'core-infra-under-domain',
      severity: 'error',
      comment: 'core/infra/ is plumbing the domain folders use; it knows nothing of posts, words or vectors',
      from: { path: '^core/infra/' },
      to: { path: '^core/', pathNot: '^core/infra/' },
    },
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
      from: { path: `^pipeline/(${STAGES})/` },
      to: { path: `^pipeline/(${STAGES})/`, pathNot: '^pipeline/$1/' },
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
