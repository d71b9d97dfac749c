// A tiny evaluator for the subset of CEL the ClusterCIDR CRD's x-kubernetes-validations use, so
// the rules' meaning (not only their text) is tested offline: literals (int, string, bool),
// self / oldSelf, field selection, has(), ! && || == != < <= > >=, ?:, and the functions
// isCIDR, cidr(...).ip().family(), cidr(...).prefixLength(), optional .hasValue() / .value().
// Anything else is a parse error. Errors follow CEL: `true || error` is true, `false && error`
// is false; a missing field is an error ("no such key"), which fails the rule.
import ipaddr from 'ipaddr.js';

type Node =
  | { k: 'lit'; v: unknown }
  | { k: 'ident'; name: string }
  | { k: 'select'; obj: Node; field: string }
  | { k: 'call'; fn: string; target?: Node; args: Node[] }
  | { k: 'unary'; op: '!'; x: Node }
  | { k: 'bin'; op: string; l: Node; r: Node }
  | { k: 'cond'; c: Node; t: Node; f: Node };

interface Optional {
  readonly optional: true;
  readonly value?: unknown;
}
interface Cidr {
  readonly cidr: true;
  readonly addr: ipaddr.IPv4 | ipaddr.IPv6;
  readonly prefix: number;
}
interface Ip {
  readonly ip: true;
  readonly addr: ipaddr.IPv4 | ipaddr.IPv6;
}

export function optionalOf(v: unknown): Optional {
  return v === undefined ? { optional: true } : { optional: true, value: v };
}

const TOKEN = /\s*(?:(\d+)|'([^'\\]*)'|"([^"\\]*)"|([A-Za-z_][A-Za-z0-9_]*)|(\|\||&&|==|!=|<=|>=|[<>!?:().,]))/y;

function tokenize(src: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    if (/^\s*$/.test(src.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(src);
    if (!m) throw new Error(`CEL: cannot tokenize at ${at}: ${src.slice(at)}`);
    if (m[1] !== undefined) out.push(`#${m[1]}`);
    else if (m[2] !== undefined) out.push(`'${m[2]}`);
    else if (m[3] !== undefined) out.push(`'${m[3]}`);
    else out.push(m[4] ?? m[5]);
  }
  return out;
}

export function parse(src: string): Node {
  const toks = tokenize(src);
  let i = 0;
  const peek = (): string | undefined => toks[i];
  const eat = (t: string): void => {
    if (toks[i] !== t) throw new Error(`CEL: expected ${t} at token ${i} in ${src}`);
    i++;
  };
  const expr = (): Node => {
    const c = binary(0);
    if (peek() !== '?') return c;
    eat('?');
    const t = expr();
    eat(':');
    return { k: 'cond', c, t, f: expr() };
  };
  const LEVELS = [['||'], ['&&'], ['==', '!='], ['<', '<=', '>', '>=']];
  const binary = (level: number): Node => {
    if (level === LEVELS.length) return unary();
    let l = binary(level + 1);
    while (LEVELS[level].includes(peek() ?? '')) {
      const op = toks[i++];
      l = { k: 'bin', op, l, r: binary(level + 1) };
    }
    return l;
  };
  const unary = (): Node => {
    if (peek() === '!') {
      i++;
      return { k: 'unary', op: '!', x: unary() };
    }
    return postfix();
  };
  const args = (): Node[] => {
    eat('(');
    const out: Node[] = [];
    while (peek() !== ')') {
      out.push(expr());
      if (peek() === ',') i++;
      else break;
    }
    eat(')');
    return out;
  };
  const postfix = (): Node => {
    let n = primary();
    while (peek() === '.') {
      i++;
      const name = toks[i++];
      if (!name || !/^[A-Za-z_]/.test(name)) throw new Error(`CEL: expected a name after . in ${src}`);
      n = peek() === '(' ? { k: 'call', fn: name, target: n, args: args() } : { k: 'select', obj: n, field: name };
    }
    return n;
  };
  const primary = (): Node => {
    const t = toks[i++];
    if (t === undefined) throw new Error(`CEL: unexpected end of ${src}`);
    if (t === '(') {
      const e = expr();
      eat(')');
      return e;
    }
    if (t.startsWith('#')) return { k: 'lit', v: Number(t.slice(1)) };
    if (t.startsWith("'")) return { k: 'lit', v: t.slice(1) };
    if (t === 'true' || t === 'false') return { k: 'lit', v: t === 'true' };
    if (/^[A-Za-z_]/.test(t)) return peek() === '(' ? { k: 'call', fn: t, args: args() } : { k: 'ident', name: t };
    throw new Error(`CEL: unexpected token ${t} in ${src}`);
  };
  const root = expr();
  if (i !== toks.length) throw new Error(`CEL: trailing tokens in ${src}`);
  return root;
}

/** Whether an expression refers to oldSelf (which makes it a transition rule). */
export function mentionsOldSelf(src: string): boolean {
  return tokenize(src).includes('oldSelf');
}

export function evaluate(src: string, vars: Record<string, unknown>): unknown {
  return ev(parse(src), vars);
}

function isOptional(v: unknown): v is Optional {
  return typeof v === 'object' && v !== null && (v as Optional).optional === true;
}

function ev(n: Node, vars: Record<string, unknown>): unknown {
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'ident':
      if (!(n.name in vars)) throw new Error(`undeclared reference to '${n.name}'`);
      return vars[n.name];
    case 'select': {
      const obj = ev(n.obj, vars);
      if (typeof obj !== 'object' || obj === null || isOptional(obj)) throw new Error(`no such key: ${n.field}`);
      if (!(n.field in obj)) throw new Error(`no such key: ${n.field}`);
      return (obj as Record<string, unknown>)[n.field];
    }
    case 'unary': {
      const x = ev(n.x, vars);
      if (typeof x !== 'boolean') throw new Error('no such overload: !');
      return !x;
    }
    case 'cond': {
      const c = ev(n.c, vars);
      if (typeof c !== 'boolean') throw new Error('no such overload: ?:');
      return c ? ev(n.t, vars) : ev(n.f, vars);
    }
    case 'bin':
      return binary(n.op, n.l, n.r, vars);
    case 'call':
      return call(n, vars);
  }
}

function binary(op: string, l: Node, r: Node, vars: Record<string, unknown>): unknown {
  if (op === '||' || op === '&&') {
    const absorbing = op === '||';
    let left: unknown;
    let leftErr: unknown;
    try {
      left = ev(l, vars);
    } catch (e) {
      leftErr = e;
    }
    if (left === absorbing) return absorbing;
    const right = ev(r, vars);
    if (right === absorbing) return absorbing;
    if (leftErr) throw leftErr;
    if (typeof left !== 'boolean' || typeof right !== 'boolean') throw new Error(`no such overload: ${op}`);
    return !absorbing;
  }
  const a = ev(l, vars);
  const b = ev(r, vars);
  switch (op) {
    case '==':
      return sameType(a, b, op) && deepEqual(a, b);
    case '!=':
      return sameType(a, b, op) && !deepEqual(a, b);
    default: {
      if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) throw new Error(`no such overload: ${op}`);
      const x = a as number | string;
      const y = b as number | string;
      return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
    }
  }
}

function sameType(a: unknown, b: unknown, op: string): true {
  const kind = (v: unknown): string => (Array.isArray(v) ? 'list' : v === null ? 'null' : typeof v);
  if (kind(a) !== kind(b)) throw new Error(`no such overload: ${kind(a)} ${op} ${kind(b)}`);
  return true;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return deepEqual(ka, kb) && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

function parseCidr(s: unknown): Cidr | undefined {
  if (typeof s !== 'string') return undefined;
  const m = /^([^/]+)\/(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const host = m[1];
  // Strict forms only, as Kubernetes' CEL library: dotted-quad IPv4, RFC 4291 IPv6 without zone.
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) {
    const prefix = Number(m[2]);
    return prefix <= 32 ? { cidr: true, addr: ipaddr.IPv4.parse(host), prefix } : undefined;
  }
  if (host.includes(':') && !host.includes('%') && ipaddr.IPv6.isValid(host)) {
    const addr = ipaddr.IPv6.parse(host);
    if (addr.isIPv4MappedAddress()) return undefined;
    const prefix = Number(m[2]);
    return prefix <= 128 ? { cidr: true, addr, prefix } : undefined;
  }
  return undefined;
}

function call(n: Extract<Node, { k: 'call' }>, vars: Record<string, unknown>): unknown {
  if (n.fn === 'has') {
    const arg = n.args[0];
    if (n.target || n.args.length !== 1 || arg.k !== 'select') throw new Error('has() needs a field selection');
    const obj = ev(arg.obj, vars);
    if (typeof obj !== 'object' || obj === null) throw new Error('has() on a non-object');
    return arg.field in obj;
  }
  const target = n.target ? ev(n.target, vars) : undefined;
  const args = n.args.map((a) => ev(a, vars));
  switch (n.fn) {
    case 'isCIDR':
      return parseCidr(args[0]) !== undefined;
    case 'cidr': {
      const c = parseCidr(args[0]);
      if (!c) throw new Error(`cidr: invalid CIDR ${String(args[0])}`);
      return c;
    }
    case 'ip':
      if (typeof target === 'object' && target !== null && (target as Cidr).cidr) return { ip: true, addr: (target as Cidr).addr } satisfies Ip;
      break;
    case 'prefixLength':
      if (typeof target === 'object' && target !== null && (target as Cidr).cidr) return (target as Cidr).prefix;
      break;
    case 'family':
      if (typeof target === 'object' && target !== null && (target as Ip).ip) return (target as Ip).addr.kind() === 'ipv4' ? 4 : 6;
      break;
    case 'hasValue':
      if (isOptional(target)) return 'value' in target;
      break;
    case 'value':
      if (isOptional(target)) {
        if (!('value' in target)) throw new Error('optional.none() dereference');
        return target.value;
      }
      break;
  }
  throw new Error(`CEL: function ${n.fn} is not implemented here`);
}
