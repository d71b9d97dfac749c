// Every file, folder and output argument of every command, given a path that cannot serve:
// one line on stderr naming the flag and the path, exit 2, and nothing started (issue 25, item 4).
// Also a mistyped command, which must not be read as an argument of the default command `run`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli } from '../kit/cli.js';

const dir = mkdtempSync(path.join(tmpdir(), 'file-args-'));
const missing = path.join(dir, 'missing.yaml');
const empty = path.join(dir, 'empty.yaml');
const blank = path.join(dir, 'blank.yaml');
const folder = path.join(dir, 'folder');
const emptyFolder = path.join(dir, 'empty-folder');
const underFile = path.join(empty, 'child.yaml');

beforeAll(() => {
  assertBuilt();
  writeFileSync(empty, '');
  writeFileSync(blank, '\n  \n\t\n');
  mkdirSync(folder);
  writeFileSync(path.join(folder, 'x.yaml'), 'a: 1\n');
  mkdirSync(emptyFolder);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each input file flag with the arguments that make the command otherwise valid. */
const INPUTS: [string, (f: string) => string[]][] = [
  ['--kubeconfig (run)', (f) => ['run', '--cloud-provider', 'fake', '--kubeconfig', f]],
  ['--kubeconfig (audit)', (f) => ['audit', '--kubeconfig', f]],
  ['--cloud-config', (f) => ['run', '--cloud-provider', 'gce', '--cloud-config', f]],
  ['--tls-cert-file', (f) => ['run', '--cloud-provider', 'fake', '--tls-cert-file', f, '--tls-private-key-file', f]],
  ['--node', (f) => ['explain', '--node', f]],
  ['--cloud-addresses', (f) => ['explain', '--node-ip', '10.0.0.1', '--cloud-addresses', f]],
  ['--nodes-file', (f) => ['plan', '--cluster-cidr', '10.0.0.0/8', '--nodes-file', f]],
  ['--clustercidrs-file', (f) => ['plan', '--nodes-file', folder + '/x.yaml', '--clustercidrs-file', f]],
  ['--faults', (f) => ['apiserver', '--faults', f]],
];

const flagOf = (title: string): string => title.split(' ')[0] as string;

describe('a file argument that cannot serve is one line and exit 2', () => {
  // Every flag reads through one function (src/util/file-argument.ts, whose cases are tested in
  // process by test/util/file-argument.property.test.ts): through the binary, each flag once with a
  // rotating state proves its wiring, and one flag of each command kind goes through every state.
  const states: [string, string, (flag: string) => RegExp][] = [
    ['missing', missing, (flag) => new RegExp(`^error: ${flag} ${missing}: cannot read: no such file\\n$`)],
    ['a folder', folder, (flag) => new RegExp(`^error: ${flag} ${folder}: cannot read: it is a directory, not a file\\n$`)],
    ['under a file', underFile, (flag) => new RegExp(`^error: ${flag} ${underFile}: cannot read: a parent of the path is not a directory\\n$`)],
    // A blank cloud-config is valid for some providers (aws, static); gce needs its [global] section.
    ['empty', empty, (flag) => new RegExp(`^error: ${flag} ${empty}: (the file is empty; |)`)],
    ['blank', blank, (flag) => new RegExp(`^error: ${flag} ${blank}: `)],
  ];
  const everyState = new Set(['--kubeconfig (audit)', '--node']);
  const cases: [string, string, string[], RegExp][] = [];
  INPUTS.forEach(([title, args], i) => {
    const flag = flagOf(title);
    const chosen = everyState.has(title) ? states : [states[i % states.length]!];
    for (const [state, file, message] of chosen) cases.push([title, state, args(file), message(flag)]);
  });
  it.each(cases)('%s, %s', async (_title, _state, args, message) => {
    const r = await runCli(args, { timeoutMs: 20_000 });
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/EISDIR|ENOENT|ENOTDIR|Cannot read properties|undefined/);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });

  it('a kubeconfig that is YAML but not a kubeconfig says what it lacks', async () => {
    const scalar = path.join(dir, 'scalar.kubeconfig');
    writeFileSync(scalar, 'null\n');
    const noClusters = path.join(dir, 'no-clusters.kubeconfig');
    writeFileSync(noClusters, 'apiVersion: v1\nkind: Config\n');
    const a = await runCli(['audit', '--kubeconfig', scalar]);
    expect(a.stderr).toBe(`error: --kubeconfig ${scalar}: not a kubeconfig (clusters, contexts and users, as kubectl config view --raw prints it)\n`);
    const b = await runCli(['audit', '--kubeconfig', noClusters]);
    expect(b.stderr).toBe(`error: --kubeconfig ${noClusters}: it names no cluster; expected a kubeconfig with clusters, contexts and users\n`);
    expect([a.code, b.code]).toEqual([2, 2]);
  });

  it('a serving certificate that is not PEM is named before anything connects', async () => {
    const notPem = path.join(dir, 'cert.pem');
    writeFileSync(notPem, 'hello\n');
    const p = await runCli(['run', '--cloud-provider', 'fake', '--tls-cert-file', notPem, '--tls-private-key-file', notPem]);
    expect(p.stderr).toBe(`error: --tls-cert-file ${notPem}: not PEM: no "-----BEGIN … CERTIFICATE-----" line; expected a PEM serving certificate (chain)\n`);
    expect(p.code).toBe(2);
  });

  it('folder and output arguments: --rbac, --write-kubeconfig, --kubeconfig-out', async () => {
    const cases: [string[], string][] = [
      [['apiserver', '--rbac', missing], `--rbac ${missing}: cannot read: no such folder`],
      [['apiserver', '--rbac', empty], `--rbac ${empty}: it is a file, not a folder`],
      [['apiserver', '--rbac', emptyFolder], `--rbac ${emptyFolder}: the folder holds no YAML or JSON files (*.yaml, *.yml, *.json) with Roles, ClusterRoles and bindings`],
      [['apiserver', '--write-kubeconfig', folder], `--write-kubeconfig ${folder}: it is a directory, not a file`],
      [['apiserver', '--write-kubeconfig', path.join(missing, 'k')], `--write-kubeconfig ${path.join(missing, 'k')}: cannot write: no folder ${missing}`],
      [['simulate', '--keep', '--kubeconfig-out', folder], `--kubeconfig-out ${folder}: it is a directory, not a file`],
      [['simulate', '--keep', '--kubeconfig-out', underFile], `--kubeconfig-out ${underFile}: cannot write: a parent of the path is not a directory`],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { timeoutMs: 20_000 });
      expect({ args, stderr: r.stderr, code: r.code }).toEqual({ args, stderr: `error: ${message}\n`, code: 2 });
    }
  });
});

describe('a mistyped command', () => {
  it.each([
    [['expain', '--node-ip', '10.0.0.1'], 'expain', 'explain'],
    [['plna'], 'plna', 'plan'],
    [['simualte'], 'simualte', 'simulate'],
    [['sim', '--nodes', '3'], 'sim', 'simulate'],
    [['audti'], 'audti', 'audit'],
  ])('%j: unknown command with the nearest one, exit 2', async (args, word, guess) => {
    const r = await runCli(args);
    expect(r.stderr).toBe(`error: unknown command "${word}" (did you mean ${guess}?); the commands are explain, apiserver, plan, run, simulate, audit (node-address-ccm --help)\n`);
    expect(r.code).toBe(2);
  });

  it('a word near no command gets no guess; help and the commands themselves still work', async () => {
    const r = await runCli(['frobnicate']);
    expect(r.stderr).toBe('error: unknown command "frobnicate"; the commands are explain, apiserver, plan, run, simulate, audit (node-address-ccm --help)\n');
    expect(r.code).toBe(2);
    const help = await runCli(['help', 'explain']);
    expect(help.stdout).toMatch(/^Usage: node-address-ccm explain/);
    expect(help.code).toBe(0);
    const flagsOnly = await runCli(['--cloud-provider', 'nope']);
    expect(flagsOnly.stderr).toMatch(/^error: --cloud-provider: unknown provider "nope"/);
    expect(flagsOnly.code).toBe(2);
  });
});
