import { describe, it, expect } from 'vitest';
import { FeatureGateError, featureGateWarnings, KNOWN_FEATURE_GATES, parseFeatureGates } from '../../src/featuregates/index.js';

describe('parseFeatureGates', () => {
  it.each<[string | undefined, boolean, string[]]>([
    [undefined, true, []],
    ['', true, []],
    [',', true, []],
    ['CloudDualStackNodeIPs=true', true, ['CloudDualStackNodeIPs']],
    ['CloudDualStackNodeIPs=false', false, ['CloudDualStackNodeIPs']],
    // Whitespace around names and values is trimmed, as component-base does.
    [' CloudDualStackNodeIPs = false ', false, ['CloudDualStackNodeIPs']],
    ['CloudDualStackNodeIPs=\tfalse', false, ['CloudDualStackNodeIPs']],
    // Go's strconv.ParseBool spellings.
    ['CloudDualStackNodeIPs=0', false, ['CloudDualStackNodeIPs']],
    ['CloudDualStackNodeIPs=F', false, ['CloudDualStackNodeIPs']],
    ['CloudDualStackNodeIPs=FALSE', false, ['CloudDualStackNodeIPs']],
    ['CloudDualStackNodeIPs=1', true, ['CloudDualStackNodeIPs']],
    ['CloudDualStackNodeIPs=True', true, ['CloudDualStackNodeIPs']],
    // Empty items are skipped; the last value of a repeated gate wins.
    ['CloudDualStackNodeIPs=false,,CloudDualStackNodeIPs=true,', true, ['CloudDualStackNodeIPs']],
  ])('%j enables CloudDualStackNodeIPs: %s', (text, enabled, explicit) => {
    const gates = parseFeatureGates(text);
    expect(gates.enabled('CloudDualStackNodeIPs')).toBe(enabled);
    expect([...gates.explicit.keys()]).toEqual(explicit);
    expect(gates.toString()).toBe(`CloudDualStackNodeIPs=${enabled}`);
  });

  it.each([
    ['Bogus=true', '--feature-gates: unrecognized feature gate "Bogus" (known: CloudDualStackNodeIPs)'],
    ['cloudDualStackNodeIPs=true', '--feature-gates: unrecognized feature gate "cloudDualStackNodeIPs" (known: CloudDualStackNodeIPs)'],
    ['CloudDualStackNodeIPs', '--feature-gates: missing bool value for "CloudDualStackNodeIPs" (write CloudDualStackNodeIPs=true or CloudDualStackNodeIPs=false; known: CloudDualStackNodeIPs)'],
    [' ', '--feature-gates: item " " names no gate (known: CloudDualStackNodeIPs)'],
    ['=true', '--feature-gates: item "=true" names no gate (known: CloudDualStackNodeIPs)'],
    ['CloudDualStackNodeIPs=yes', '--feature-gates: invalid value of CloudDualStackNodeIPs=yes: "yes" is not a boolean (use true or false; known: CloudDualStackNodeIPs)'],
    ['CloudDualStackNodeIPs=', '--feature-gates: invalid value of CloudDualStackNodeIPs=: "" is not a boolean (use true or false; known: CloudDualStackNodeIPs)'],
    ['CloudDualStackNodeIPs=tRuE', '--feature-gates: invalid value of CloudDualStackNodeIPs=tRuE: "tRuE" is not a boolean (use true or false; known: CloudDualStackNodeIPs)'],
    // The value is checked before the name, as component-base does.
    ['Bogus=maybe', '--feature-gates: invalid value of Bogus=maybe: "maybe" is not a boolean (use true or false; known: CloudDualStackNodeIPs)'],
  ])('%j fails: %s', (text, message) => {
    expect(() => parseFeatureGates(text)).toThrow(FeatureGateError);
    expect(() => parseFeatureGates(text)).toThrow(new FeatureGateError(message));
  });

  it('names the known gates in every error (issue #2: an unknown gate or a non-boolean)', () => {
    for (const text of ['Bogus=true', 'CloudDualStackNodeIPs=yes', 'CloudDualStackNodeIPs', '=true', 'Bogus=maybe']) {
      expect(() => parseFeatureGates(text)).toThrow(/\(.*known: CloudDualStackNodeIPs\)$/);
    }
  });

  it('knows CloudDualStackNodeIPs, default on', () => {
    expect(KNOWN_FEATURE_GATES.CloudDualStackNodeIPs.default).toBe(true);
  });

  it.each([
    [undefined, []],
    ['CloudDualStackNodeIPs=true', []],
    ['CloudDualStackNodeIPs=false', ['CloudDualStackNodeIPs']],
  ])('%j diverges from upstream in %j', (text, diverging) => {
    const gates = parseFeatureGates(text);
    expect(gates.divergingFromUpstream()).toEqual(diverging);
    expect(featureGateWarnings(gates)).toHaveLength(diverging.length);
  });

  it('warns in words when CloudDualStackNodeIPs is off', () => {
    expect(featureGateWarnings(parseFeatureGates('CloudDualStackNodeIPs=false'))).toEqual([
      'feature gate CloudDualStackNodeIPs is set to false, but Kubernetes locks it to true: dual-stack provided-node-ip annotations will be rejected and those nodes stay tainted',
    ]);
  });
});
