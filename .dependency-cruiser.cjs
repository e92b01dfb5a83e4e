// Folder rules of reasoning-jury (issue 12, point 6). `npm run lint:deps` checks them and
// scripts/test.sh runs that right after the type-check, so a broken rule fails the suite.
// docs/architecture.md explains the layers with a picture; keep the two in step.
//
// Layers, top to bottom (a layer may import the ones below it, never the ones above):
//   src/cli                                    the commands
//   src/api                                    the library's entry points (package.json "exports"): the CLI sits on them
//   src/compose                                composition: sources and outputs by URL, the runtime
//   src/ops                                    metrics and probes: read pipeline and model-layer state
//   src/view                                   the web viewer: reads committed shards, loaded by the CLI only
//   src/pipeline                               the executor: stage, intake, judge pool, ranges; owns Source
//   src/pipeline/commit                        shard format and commit protocol: layout, manifests, lease
//   src/pipeline/storage                       the ObjectStore interface and stores, retries, StorageError
//   connectors/*                               implement pipeline interfaces (see their own rule)
//   src/eval, src/report, src/induce           offline jobs over shards
//   src/jury, src/taxonomy, src/derive         judging and what is derived from it
//   src/llm, src/prompts, src/segment, src/config, src/models   model layer
//   src/util                                   neutral helpers
//   schemas                                    every contract
//   src/sim                                    the simulator, plugged in by the CLI and the library entry points (src/api) only

/** Top layer: only these pick concrete sources, outputs and providers. */
const TOP = 'src/(cli|api|compose)/';
/** Offline jobs that read committed shards. */
const OFFLINE = 'src/(eval|report|induce)/';
/** What a connector may import from src/: the interfaces the pipeline owns and neutral helpers. */
const CONNECTOR_ALLOWED = [
  '^src/util/',
  // the contracts: what a source is, what a sink receives, where files go, how positions are named
  '^src/pipeline/source[.]ts$',
  '^src/pipeline/sink[.]ts$',
  '^src/pipeline/storage/object-store[.]ts$',
  '^src/pipeline/commit/layout[.]ts$',
  '^src/pipeline/positions[.]ts$',
  // how a connector registers what it reads or writes under its URL scheme (docs/extending.md)
  '^src/pipeline/connector[.]ts$',
];
/** Who may load the simulator: the CLI and the library's entry points plug it in (the simulated ladder lives in the CLI). */
const SIM_USERS = ['^src/sim/', '^src/cli/', '^src/api/'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A module cycle means neither side can be read, tested or loaded alone, and ESM load order ' +
        'inside a cycle can hand out bindings that are not initialised yet.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment:
        'Folders are the units a newcomer reads; once two folders import each other the layer picture ' +
        'stops being true (issue 12 found 15 of 20 folders in one loop). A parent folder counts its ' +
        'subfolders, so src/jury -> src/jury/deliberation -> src/jury is not reported.',
      scope: 'folder',
      from: { path: '^(src|connectors|schemas)(/|$)' },
      to: { circular: true },
    },
    {
      name: 'schemas-import-nothing-internal',
      severity: 'error',
      comment:
        'schemas/ holds every contract; anything may depend on it, so it must depend on nothing of ours ' +
        'or a contract change would drag in runtime code (the Kafka/S3 option schemas once lived in connectors/).',
      from: { path: '^schemas/' },
      to: { path: '^(src|connectors)/' },
    },
    {
      name: 'util-is-neutral',
      severity: 'error',
      comment:
        'src/util is where code shared by unrelated layers goes (PRNG, paths, small HTTP helpers); it can ' +
        'only stay shareable if it knows no layer above it.',
      from: { path: '^src/util/' },
      to: { path: '^(src/(?!util/)|connectors/)' },
    },
    {
      name: 'model-layer-imports-down-only',
      severity: 'error',
      comment:
        'The model layer (providers, prompts, segmentation, config, model files) is used by judging and ' +
        'by offline jobs; if it imported them, every change to judging would ripple into the gateway.',
      from: { path: '^src/(llm|prompts|segment|config|models)/' },
      to: { path: `^(${TOP}|src/(pipeline|eval|report|jury|taxonomy|derive)/|connectors/)` },
    },
    {
      name: 'judging-imports-down-only',
      severity: 'error',
      comment:
        'Jury, taxonomy and derive turn one record into a verdict and rows; they must not know how records ' +
        'arrive, are committed or evaluated, so they stay testable on a plain record. They may import each ' +
        'other (no-circular keeps that acyclic).',
      from: { path: '^src/(jury|derive|taxonomy)/' },
      to: { path: `^(${TOP}|src/(pipeline|eval|report|induce)/|connectors/)` },
    },
    {
      name: 'offline-jobs-read-shards',
      severity: 'error',
      comment:
        'eval, report and taxonomy induction run over committed shards: they may read shards and use jury, ' +
        'taxonomy and llm, but must not run the stage, pick concrete connectors or reach into the CLI; ' +
        'the CLI hands them an ObjectStore.',
      from: { path: `^${OFFLINE}` },
      to: { path: `^(${TOP}|connectors/|src/pipeline/stage[.]ts$)` },
    },
    {
      name: 'pipeline-imports-down-only',
      severity: 'error',
      comment:
        'The pipeline owns the Source and ObjectStore interfaces and connectors implement them; if the ' +
        'pipeline imported a connector or the CLI, the dependency would point the wrong way again.',
      from: { path: '^src/pipeline/' },
      to: { path: `^(${TOP}|${OFFLINE}|connectors/)` },
    },
    {
      name: 'storage-imports-no-pipeline',
      severity: 'error',
      comment:
        'src/pipeline/storage is the bottom of the pipeline: the ObjectStore interface, the local store, ' +
        'retries and StorageError. It knows no shard, manifest or range, so a store (and a connector ' +
        'implementing one) can be read and tested without the commit protocol or the executor.',
      from: { path: '^src/pipeline/storage/' },
      to: { path: '^src/pipeline/(?!storage/)' },
    },
    {
      name: 'commit-imports-storage-only',
      severity: 'error',
      comment:
        'src/pipeline/commit (shard format, commit protocol, readers, lease) writes through storage/ and ' +
        'is used by the executor, decide, the viewer and offline readers; if it imported the executor, ' +
        'reading or committing shards would load the stage.',
      from: { path: '^src/pipeline/commit/' },
      to: { path: '^src/pipeline/(?!commit/|storage/)' },
    },
    {
      name: 'the-cli-sits-on-the-api',
      severity: 'error',
      comment:
        'src/api is what a program that embeds the stage imports (package.json "exports"), and the commands ' +
        'are built on it: one way in. If the library imported the CLI (commander, the progress bar, the ' +
        'viewer) or compose imported the library, an embedding program would load the command line.',
      from: { path: '^src/(api|compose)/' },
      to: { path: '^src/(cli|view)/' },
    },
    {
      name: 'compose-below-the-api',
      severity: 'error',
      comment: 'compose is what the entry points are composed of; if it imported them the layers would loop.',
      from: { path: '^src/compose/' },
      to: { path: '^src/api/' },
    },
    {
      name: 'ops-only-observes',
      severity: 'error',
      comment:
        'src/ops (metrics, probes) reads what the stage and the gateway expose and reports it; it must not ' +
        'pick connectors, run jobs, judge or reach into the CLI, or watching a run would start changing it.',
      from: { path: '^src/ops/' },
      to: { path: `^(${TOP}|${OFFLINE}|connectors/|src/(jury|taxonomy|derive|sim)/)` },
    },
    {
      name: 'only-the-cli-uses-ops',
      severity: 'error',
      comment:
        'Metrics and probes are plugged in by the CLI through observer hooks. If the pipeline, the model layer ' +
        'or the jury imported src/ops, prom-client would load in every run and judging code would depend on ' +
        'how it is watched.',
      from: { path: '^(src|connectors|schemas)/', pathNot: `^(${TOP}|src/ops/)` },
      to: { path: '^src/ops/' },
    },
    {
      name: 'view-reads-shards',
      severity: 'error',
      comment:
        'The viewer (`reasoning-jury view`) shows committed shards: it reads them through the pipeline\'s ' +
        'readers and cuts traces into steps, but never runs the stage, picks connectors, judges or reaches ' +
        'into the CLI; the CLI hands it an ObjectStore and the review commit (which takes the output\'s lease).',
      from: { path: '^src/view/' },
      to: { path: `^(${TOP}|${OFFLINE}|connectors/|src/(ops|jury|taxonomy|llm|sim|models|config)/|src/pipeline/stage[.]ts$)` },
    },
    {
      name: 'only-the-cli-uses-view',
      severity: 'error',
      comment: 'The web server and its page load only for `reasoning-jury view`; nothing that runs a job may depend on it.',
      from: { path: '^(src|connectors|schemas)/', pathNot: '^src/(cli|view)/' },
      to: { path: '^src/view/' },
    },
    {
      name: 'connectors-only-pipeline-interfaces',
      severity: 'error',
      comment:
        'Connectors are plain sources and stores: they implement interfaces the pipeline owns and never ' +
        'run the stage or know the jury, taxonomy, derive, llm, cli, compose or sim, so a new connector ' +
        'needs no knowledge of judging. Only schemas/, src/util/ and the pipeline interfaces are allowed.',
      from: { path: '^connectors/' },
      to: { path: '^src/', pathNot: CONNECTOR_ALLOWED },
    },
    {
      name: 'connectors-are-independent',
      severity: 'error',
      comment:
        'One connector must not build on another (a Kafka job committing through the S3 committer made ' +
        'committers inherit across three folders). Shared code goes to src/util or a pipeline contract.',
      from: { path: '^connectors/([^/]+)/' },
      to: { path: '^connectors/', pathNot: '^connectors/$1/' },
    },
    {
      name: 'connector-entries-load-their-own',
      severity: 'error',
      comment:
        'A connector\'s entry module (connectors/<name>.ts) registers its URL scheme and is loaded by every ' +
        'command, so it may reach only its own folder (lazily), never another connector\'s.',
      from: { path: '^connectors/([^/.]+)[.]ts$' },
      to: { path: '^connectors/', pathNot: '^connectors/$1/' },
    },
    {
      name: 'sim-imports-little',
      severity: 'error',
      comment:
        'The simulator stands in for a model. It may use contracts, neutral helpers, the provider types, ' +
        'prompt files and segmentation, but not jury or taxonomy internals: otherwise it silently agrees ' +
        'with the code it is meant to test, and every jury change breaks it.',
      from: { path: '^src/sim/' },
      to: {
        path: '^(src/|connectors/)',
        pathNot: ['^src/(sim|util|prompts|segment)/', '^src/llm/types[.]ts$'],
      },
    },
    {
      name: 'no-production-import-of-sim',
      severity: 'error',
      comment:
        'The simulator is a provider the CLI plugs in. Production code that imports it loads it even when ' +
        'every endpoint is a real model (issue 12 found every record fed to it through hooks).',
      from: { path: '^(src|connectors|schemas)/', pathNot: SIM_USERS },
      to: { path: '^src/sim/' },
    },
    {
      name: 'no-test-code-in-production',
      severity: 'error',
      comment: 'test/ and bench/ are not shipped (see package.json "files"); importing them breaks the installed package.',
      from: { path: '^(src|connectors|schemas)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import the checker cannot resolve is an import no rule can see; fail instead of passing blind.',
      from: { path: '^(src|connectors|schemas)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type import upward still couples the layers.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Node's ESM resolution with the conditions our own code loads under.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default'],
      mainFields: ['module', 'main'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
