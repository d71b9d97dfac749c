#!/usr/bin/env node
// Builds the image's /app (what deploy/Dockerfile copies into the runtime stage), runnable and
// measurable here without Docker:
//
//   node scripts/build-image-root.mjs [--out DIR] [--cloud all|aws|azure|gce|kind|static] [--install DIR]
//
//   DIR/lib/main.js        the CLI (esbuild bundle of dist/src/cli/main.js, split per provider)
//   DIR/lib/providers.js   the provider registry (second entry; tests load providers through it)
//   DIR/lib/**/*.map       source maps (node --enable-source-maps)
//   DIR/package.json       name, version, "type": "module", bin
//   DIR/node_modules       only what the bundle leaves external: @google-cloud/compute and the
//                          packages it needs, pruned to the files the v1 instances client loads
//   DIR/report.json        sizes, for docs/dependencies.md and the startup benchmark
//   DIR/meta.json          esbuild's metafile: which input went to which output, byte by byte
//
// Needs `npm run build` first (bundles the compiled dist/, the code the tests ran). --install DIR
// reuses an `npm ci --omit=dev` tree instead of installing one (the Dockerfile's deps stage).
// Bundling folds @kubernetes/client-node down to the KubeConfig/auth code the client uses (its
// generated API models are never referenced), the EC2 SDK down to DescribeInstances, and the
// Azure SDK's ARM clients down to the operation groups the azure adapter calls.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLOUDS = ['all', 'aws', 'azure', 'gce', 'kind', 'static'];

/** Packages left out of the bundle, with the cloud that needs them. */
const EXTERNAL = {
  // Its clients read protos/protos.json and their *_config.json at run time by relative path, and
  // google-gax loads its own JSON protos the same way: bundling would break those reads.
  '@google-cloud/compute': 'gce',
};

/** Files of an external package that are never loaded at run time (after the package's own rules). */
const PRUNE_ALWAYS = [/\.d\.ts$/, /\.d\.cts$/, /\.d\.mts$/, /\.map$/, /\.tsbuildinfo$/, /(^|\/)(README|CHANGELOG|HISTORY|CONTRIBUTING|SECURITY)(\.[a-z]+)?$/i,
  /\.md$/i, /(^|\/)(test|tests|__tests__|docs?|example|examples|\.github)\//, /(^|\/)\.[a-z]+rc(\.json)?$/];

/** Per package, paths (relative to the package) that the code we call never reads. */
const PRUNE_PACKAGE = {
  '@google-cloud/compute': (rel) =>
    // Only the v1 instances client is imported (providers/gce/client.ts); v1beta, v1small, the
    // other 90-odd v1 clients and the static-code protos (protos.js) are dead weight.
    (rel.startsWith('build/src/') && !/^build\/src\/v1\/instances_(client\.js|client_config\.json|proto_list\.json)$/.test(rel))
    // The clients load protos.json (pruned below); the .proto sources and protos.js are unused.
    || rel === 'build/protos/protos.js' || rel.startsWith('build/protos/google/'),
  // grpc-js ships its TypeScript sources next to the build.
  '@grpc/grpc-js': (rel) => rel.startsWith('src/'),
};

/**
 * `import … from 'node:http'` in an ES module makes Node 22 build the module's ES facade, which
 * reads every export, including http.WebSocket: that loads undici and compiles its llhttp
 * WebAssembly, about 10 MiB of RSS for a process that never opens a WebSocket. require() reads
 * nothing, so the bundle's ES imports (static and dynamic) of http and https go through
 * require(), with the same named exports minus the lazy getters (a name the code imports but this
 * list lacks fails the build).
 */
const requireBuiltins = {
  name: 'require-http-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?https?$/ }, (args) =>
      (args.kind === 'import-statement' || args.kind === 'dynamic-import') && args.namespace === 'file' ? { path: args.path.replace(/^node:/, ''), namespace: 'required-builtin' } : undefined);
    b.onLoad({ filter: /.*/, namespace: 'required-builtin' }, (args) => {
      const names = Object.entries(Object.getOwnPropertyDescriptors(createRequire(import.meta.url)(`node:${args.path}`)))
        .filter(([name, d]) => !d.get && /^[A-Za-z_$][\w$]*$/.test(name) && name !== 'default')
        .map(([name]) => name);
      return { contents: `const m = require('node:${args.path}');\nexport default m;\nexport const { ${names.join(', ')} } = m;\n`, loader: 'js', resolveDir: repo };
    });
  },
};

/** Replaces every match of `re` in `text`; throws when the number of matches is not `expected`. */
function rewrite(file, text, re, replacement, expected) {
  const found = text.match(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`))?.length ?? 0;
  if (found !== expected) throw new Error(`${file}: expected ${expected} match(es) of ${re}, found ${found}: the SDK's layout changed, update azureClients in scripts/build-image-root.mjs`);
  return text.replace(re, replacement);
}

/** Operation groups the azure adapter calls (providers/azure/arm.ts), per ARM client. */
const AZURE_NETWORK_GROUPS = ['NetworkInterfaces', 'PublicIPAddresses'];
const AZURE_COMPUTE_GROUPS = ['virtualMachines', 'virtualMachineScaleSets', 'virtualMachineScaleSetVMs'];

/** `export const Name = …` blocks of a generated module, by name, in their order; and what precedes the first. */
function exportBlocks(file, text, min) {
  const starts = [...text.matchAll(/^export const (\w+) = /gm)];
  if (starts.length < min) throw new Error(`${file}: found ${starts.length} exported constants: update pruneNetworkModels in scripts/build-image-root.mjs`);
  const head = text.slice(0, starts[0].index);
  return { head, blocks: new Map(starts.map((m, i) => [m[1], text.slice(m.index, i + 1 < starts.length ? starts[i + 1].index : text.length)])) };
}

/**
 * What arm-network's kept modules (the operation groups the adapter calls, and the client with its
 * own few operations) need of its models: the parameters they name (`Parameters.X`), and the
 * mappers they and those parameters name, with every mapper those reach through `className`,
 * `uberParent` and `X.type.…` references. A name the code uses but the models lack fails the build.
 */
function networkModelsNeeded(esm) {
  const sources = [...AZURE_NETWORK_GROUPS.map((g) => `operations/${g[0].toLowerCase()}${g.slice(1)}.js`), 'networkManagementClient.js'].map((f) => readFileSync(path.join(esm, f), 'utf8'));
  const paramsFile = path.join(esm, 'models/parameters.js');
  const paramsText = readFileSync(paramsFile, 'utf8');
  const imports = /^import \{([^}]*)\} from "(?:\.\.\/models|\.)\/mappers\.js";$/m.exec(paramsText);
  if (!imports) throw new Error(`${paramsFile}: no import of the mappers: update pruneNetworkModels`);
  const alias = new Map(imports[1].split(',').map((x) => x.trim()).filter(Boolean).map((x) => { const [name, as] = x.split(/\s+as\s+/); return [as ?? name, name]; }));
  const params = exportBlocks(paramsFile, paramsText, 50);
  const parameters = new Set(sources.flatMap((t) => [...t.matchAll(/\bParameters\.(\w+)/g)].map((m) => m[1])));
  const roots = sources.flatMap((t) => [...t.matchAll(/\bMappers\.(\w+)/g)].map((m) => m[1]));
  for (const p of parameters) {
    const block = params.blocks.get(p);
    if (!block) throw new Error(`${paramsFile}: no parameter ${p}, which the client names: update pruneNetworkModels`);
    for (const m of block.matchAll(/\b(\w+)\b/g)) if (alias.has(m[1])) roots.push(alias.get(m[1]));
  }
  const mappersFile = path.join(esm, 'models/mappers.js');
  const mappers = exportBlocks(mappersFile, readFileSync(mappersFile, 'utf8'), 100);
  const keep = new Set();
  const stack = [...roots];
  while (stack.length > 0) {
    const name = stack.pop();
    if (keep.has(name)) continue;
    const block = mappers.blocks.get(name);
    if (!block) throw new Error(`${mappersFile}: no mapper ${name}, which the client names: update pruneNetworkModels`);
    keep.add(name);
    for (const m of block.matchAll(/(?:className|uberParent): "(\w+)"|\b(\w+)\.type\b/g)) if (mappers.blocks.has(m[1] ?? m[2])) stack.push(m[1] ?? m[2]);
  }
  return { parameters, mappers: keep, alias };
}

/**
 * arm-network's serializer is handed the whole `Mappers` namespace (900-odd type descriptions, a
 * megabyte of object literals built at load) and the operations the whole `Parameters` one (360,
 * which import the request-body mappers of every operation): both are namespace imports, so
 * esbuild keeps every export. Here they keep what the kept modules need (networkModelsNeeded), in
 * their original order.
 */
function pruneNetworkModels(file, text) {
  const esm = path.dirname(path.dirname(file));
  const need = networkModelsNeeded(esm);
  const { head, blocks } = exportBlocks(file, text, 50);
  if (file.endsWith('mappers.js')) return head + [...blocks].filter(([name]) => need.mappers.has(name)).map(([, b]) => b).join('');
  const used = [...need.alias].filter(([as, name]) => need.mappers.has(name) && [...need.parameters].some((p) => new RegExp(`\\b${as}\\b`).test(blocks.get(p))));
  const imports = `import { ${used.map(([as, name]) => (as === name ? name : `${name} as ${as}`)).join(', ')} } from "./mappers.js";`;
  return rewrite(file, head, /^import \{[^}]*\} from "(?:\.\.\/models|\.)\/mappers\.js";$/m, imports, 1) + [...blocks].filter(([name]) => need.parameters.has(name)).map(([, b]) => b).join('');
}

/**
 * The ARM clients build one object per operation group in their constructors, about 160 for
 * @azure/arm-network and 50 for @azure/arm-compute, so bundling keeps every group's code and
 * loading the chunk evaluates it. Here each constructor builds only the groups the adapter calls;
 * the packages are side-effect free, so esbuild then leaves the other groups out, as the Compute
 * protos are cut for gce. Also out: arm-compute's restorePoller (it imports every group's
 * long-running operations), and from arm-network's index everything but the client.
 */
const azureClients = {
  name: 'azure-arm-clients',
  setup(b) {
    const load = (re, edit) => b.onLoad({ filter: re }, (args) => ({ contents: edit(args.path, readFileSync(args.path, 'utf8')), loader: 'js' }));
    load(/[\\/]@azure[\\/]arm-network[\\/]dist[\\/]esm[\\/]networkManagementClient\.js$/, (file, text) => {
      const keep = AZURE_NETWORK_GROUPS.map((g) => `${g}Impl`);
      const names = (/import \{([^}]*Impl[^}]*)\} from "\.\/operations\/index\.js";/.exec(text)?.[1] ?? '').split(',').map((n) => n.trim()).filter(Boolean);
      for (const k of keep) if (!names.includes(k)) throw new Error(`${file}: no ${k}: update azureClients in scripts/build-image-root.mjs`);
      text = rewrite(file, text, /import \{[^}]*Impl[^}]*\} from "\.\/operations\/index\.js";/, `import { ${keep.join(', ')} } from "./operations/index.js";`, 1);
      // One assignment per group, some wrapped after the `=`.
      return rewrite(file, text, new RegExp(`\\n\\s*this\\.\\w+ =\\s+new (?!(?:${keep.join('|')})\\()\\w+Impl\\(this\\);`, 'g'), '', names.length - keep.length);
    });
    // The package index re-exports its 500-odd enums (each an object built at load) and the
    // operation interfaces: the adapter imports the client alone.
    load(/[\\/]@azure[\\/]arm-network[\\/]dist[\\/]esm[\\/]index\.js$/, (file, text) => {
      rewrite(file, text, /^export \{ NetworkManagementClient \} from "\.\/networkManagementClient\.js";$/m, '', 1);
      return 'export { NetworkManagementClient } from "./networkManagementClient.js";\n';
    });
    load(/[\\/]@azure[\\/]arm-network[\\/]dist[\\/]esm[\\/]models[\\/](mappers|parameters)\.js$/, (file, text) => pruneNetworkModels(file, text));
    load(/[\\/]@azure[\\/]arm-compute[\\/]dist[\\/]esm[\\/]computeManagementClient\.js$/, (file, text) => {
      const all = [...text.matchAll(/^import \{ _get\w+Operations \} from "\.\/classic\/(\w+)\/index\.js";$/gm)].map((m) => m[1]);
      for (const k of AZURE_COMPUTE_GROUPS) if (!all.includes(k)) throw new Error(`${file}: no operation group ${k}: update azureClients in scripts/build-image-root.mjs`);
      const drop = all.filter((g) => !AZURE_COMPUTE_GROUPS.includes(g));
      text = rewrite(file, text, new RegExp(`^import \\{ _get\\w+Operations \\} from "\\./classic/(${drop.join('|')})/index\\.js";\\n`, 'gm'), '', drop.length);
      return rewrite(file, text, new RegExp(`^\\s*this\\.(${drop.join('|')}) =\\s+_get\\w+Operations\\(this\\._client\\);\\n`, 'gm'), '', drop.length);
    });
    load(/[\\/]@azure[\\/]arm-compute[\\/]dist[\\/]esm[\\/]index\.js$/, (file, text) => rewrite(file, text, /^export \{ restorePoller \} from "\.\/restorePollerHelpers\.js";\n/m, '', 1));
  },
};

function du(dir) {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(path.join(entry.parentPath ?? entry.path, entry.name)).size;
  }
  return total;
}

/** The packages `roots` need, transitively, per package-lock.json (node_modules paths). */
function closure(lock, roots) {
  const packages = lock.packages;
  const keep = new Set();
  const visit = (from, name) => {
    // Node's lookup: the nearest node_modules/<name> walking up from the requiring package.
    let base = from;
    for (;;) {
      const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (packages[candidate]) {
        if (keep.has(candidate)) return;
        const meta = packages[candidate];
        if (meta.dev) return;
        keep.add(candidate);
        for (const dep of Object.keys({ ...meta.dependencies, ...meta.optionalDependencies, ...meta.peerDependencies })) visit(candidate, dep);
        return;
      }
      if (!base) return; // optional/peer dependency that is not installed
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  for (const r of roots) visit('', r);
  return keep;
}

/**
 * Cuts the Compute protos (11.7 MB of JSON: v1, v1beta and v1small, ~190 services) down to the
 * v1 services the adapter calls and the messages they reach. The instances client loads this
 * file into protobufjs when it is built: the whole file costs ~0.5 s and ~80 MiB resident; the
 * reachable part, a few ms and a few MiB. Everything outside google.cloud.compute (google.api,
 * google.protobuf, the google.cloud extensions) stays as it is.
 */
function pruneComputeProtos(file, services) {
  const root = JSON.parse(readFileSync(file, 'utf8'));
  const compute = root.nested.google.nested.cloud.nested.compute.nested;
  for (const version of Object.keys(compute)) if (version !== 'v1') delete compute[version];
  const v1 = compute.v1.nested;
  const keep = new Set();
  const stack = [...services];
  while (stack.length > 0) {
    const name = stack.pop();
    if (keep.has(name) || !v1[name]) continue;
    keep.add(name);
    const walk = (t) => {
      for (const m of Object.values(t.methods ?? {})) stack.push(m.requestType, m.responseType);
      // Relative names resolve in v1 (the package is flat); "Outer.Inner" keeps Outer whole.
      for (const f of Object.values(t.fields ?? {})) stack.push(f.type.split('.')[0]);
      for (const n of Object.values(t.nested ?? {})) walk(n);
    };
    walk(v1[name]);
  }
  for (const missing of services) if (!keep.has(missing)) throw new Error(`${file}: no service google.cloud.compute.v1.${missing}`);
  for (const name of Object.keys(v1)) if (!keep.has(name)) delete v1[name];
  writeFileSync(file, JSON.stringify(root));
}

function prune(root, keep) {
  const nm = path.join(root, 'node_modules');
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  // Packages outside the closure go entirely (deepest first so nested trees vanish with them).
  const installed = Object.keys(lock.packages).filter((p) => p.startsWith('node_modules/') && existsSync(path.join(root, p)));
  for (const p of installed.sort((a, b) => b.length - a.length)) {
    if (!keep.has(p)) rmSync(path.join(root, p), { recursive: true, force: true });
  }
  // Then files nobody loads inside the packages that stay.
  for (const p of keep) {
    const dir = path.join(root, p);
    if (!existsSync(dir)) continue;
    const name = p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const own = PRUNE_PACKAGE[name];
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const abs = path.join(entry.parentPath ?? entry.path, entry.name);
      const rel = path.relative(dir, abs).split(path.sep).join('/');
      if (rel.startsWith('node_modules/')) continue; // a nested package: handled as its own entry
      if (rel === 'package.json') continue;
      if (PRUNE_ALWAYS.some((re) => re.test(rel)) || own?.(rel)) rmSync(abs);
    }
  }
  const protos = path.join(nm, '@google-cloud/compute/build/protos/protos.json');
  if (keep.has('node_modules/@google-cloud/compute') && existsSync(protos)) pruneComputeProtos(protos, ['Instances']);
  // Empty folders and npm's bookkeeping.
  rmSync(path.join(nm, '.package-lock.json'), { force: true });
  rmSync(path.join(nm, '.bin'), { recursive: true, force: true });
  execFileSync('find', [nm, '-type', 'd', '-empty', '-delete']);
}

async function main() {
  const { values } = parseArgs({ options: { out: { type: 'string', default: path.join(repo, 'build/image') }, cloud: { type: 'string', default: 'all' }, install: { type: 'string' } } });
  const cloud = values.cloud;
  if (!CLOUDS.includes(cloud)) throw new Error(`--cloud: "${cloud}" is not one of ${CLOUDS.join(', ')}`);
  const out = path.resolve(values.out);
  if (!existsSync(path.join(repo, 'dist/src/cli/main.js'))) throw new Error('dist/ is missing: run "npm run build" first');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(path.join(out, 'lib'), { recursive: true });

  const externals = Object.keys(EXTERNAL);
  const result = await build({
    entryPoints: { main: path.join(repo, 'dist/src/cli/main.js'), providers: path.join(repo, 'dist/providers/index.js') },
    outdir: path.join(out, 'lib'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Prefer packages' ESM builds: the EC2 SDK's dist-es is side-effect free, so only the
    // DescribeInstances path stays.
    mainFields: ['module', 'main'],
    external: externals.flatMap((e) => [e, `${e}/*`]),
    // whatwg-url (node-fetch's) requires Node's built-in punycode, which Node 22 deprecates with a
    // warning on stderr for code outside node_modules, as the bundle is: use the npm package instead.
    alias: { punycode: 'punycode/punycode.js' },
    plugins: [requireBuiltins, azureClients],
    sourcemap: 'linked',
    sourcesContent: false,
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
    chunkNames: 'chunks/[name]-[hash]',
    // CommonJS packages inside an ES module bundle still call require() for built-ins.
    banner: { js: "import { createRequire as __ccmRequire } from 'node:module'; const require = __ccmRequire(import.meta.url);" },
  });
  writeFileSync(path.join(out, 'meta.json'), JSON.stringify(result.metafile));
  const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8'));
  writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, license: pkg.license, type: 'module', bin: { [pkg.name]: 'lib/main.js' } }, null, 2)}\n`);

  // Production dependencies the bundle leaves external, for this variant.
  const wanted = externals.filter((e) => cloud === 'all' || EXTERNAL[e] === cloud);
  let installBytes = 0;
  mkdirSync(path.join(out, 'node_modules')); // empty in variants without gce: the Dockerfile copies it anyway
  if (wanted.length > 0) {
    if (values.install) {
      cpSync(path.join(values.install, 'node_modules'), path.join(out, 'node_modules'), { recursive: true, verbatimSymlinks: true, force: true });
    } else {
      const tmp = path.join(out, '.install');
      mkdirSync(tmp);
      cpSync(path.join(repo, 'package.json'), path.join(tmp, 'package.json'));
      cpSync(path.join(repo, 'package-lock.json'), path.join(tmp, 'package-lock.json'));
      execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] });
      // Moved into place (the same file system), not copied and deleted: ~30,000 files each way.
      rmSync(path.join(out, 'node_modules'), { recursive: true });
      renameSync(path.join(tmp, 'node_modules'), path.join(out, 'node_modules'));
      rmSync(tmp, { recursive: true, force: true });
    }
    cpSync(path.join(repo, 'package-lock.json'), path.join(out, 'package-lock.json'));
    installBytes = du(path.join(out, 'node_modules'));
    const lock = JSON.parse(readFileSync(path.join(out, 'package-lock.json'), 'utf8'));
    prune(out, closure(lock, wanted));
    rmSync(path.join(out, 'package-lock.json'));
  }
  const report = {
    cloud,
    appBytes: du(path.join(out, 'lib')),
    sourceMapBytes: readdirSync(path.join(out, 'lib'), { recursive: true }).filter((f) => String(f).endsWith('.map')).reduce((n, f) => n + statSync(path.join(out, 'lib', String(f))).size, 0),
    nodeModulesBeforePruneBytes: installBytes,
    nodeModulesBytes: du(path.join(out, 'node_modules')),
    externals: wanted,
  };
  report.totalBytes = report.appBytes + report.nodeModulesBytes;
  writeFileSync(path.join(out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(`${out} (${cloud}): app ${mb(report.appBytes)} (maps ${mb(report.sourceMapBytes)}), node_modules ${mb(report.nodeModulesBytes)}${installBytes ? ` (was ${mb(installBytes)} before pruning)` : ''}, total ${mb(report.totalBytes)}`);
}

await main();
