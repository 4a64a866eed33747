import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../lib/config/defaults.ts';
import { parseConfig } from '../../lib/config/parse-config.ts';
import { endpointsPatches, lines, parse } from './helpers.ts';

const LIST = 'sync.toHost.endpoints.patches';

describe('parseConfig: defaults and the whole file', () => {
  it('gives the documented defaults for a file without owned sections, keeping other keys', () => {
    const { config, diagnostics } = parse(
      'controlPlane:\n  distro: k8s\nexperimental: {a: [1, 2]}\n',
    );
    expect(diagnostics).toEqual([]);
    expect(config?.resources.endpoints).toEqual({ enabled: true, patches: [] });
    expect(config?.resources.services.enabled).toBe(true);
    expect(config?.resources.secrets.enabled).toBe(true);
    expect(config?.resources.configMaps.enabled).toBe(true);
    expect(config?.namespaces).toEqual({ enabled: false, mappings: {} });
    expect(config?.clusterDomain).toBe('cluster.local');
    expect(config?.source).toBe('test.yaml');
    expect(config?.raw).toEqual({
      controlPlane: { distro: 'k8s' },
      experimental: { a: [1, 2] },
      sync: {
        toHost: {
          endpoints: { enabled: true },
          services: { enabled: true },
          secrets: { enabled: true },
          configMaps: { enabled: true },
          endpointSlices: { enabled: true },
          namespaces: { enabled: false, mappings: { byName: {} } },
        },
      },
      networking: { advanced: { clusterDomain: 'cluster.local' } },
    });
  });

  it('keeps values the file gives over the defaults, in raw and in the typed config', () => {
    const { config } = parse(
      'sync:\n  toHost:\n    endpoints:\n      enabled: false\n    services:\n      enabled: false\n    pods: {enabled: true}\nnetworking:\n  advanced:\n    clusterDomain: example.org\n    proxyKubelets: {}\n',
    );
    expect(config?.resources.endpoints.enabled).toBe(false);
    expect(config?.clusterDomain).toBe('example.org');
    const raw = config?.raw as { sync: { toHost: Record<string, unknown> }; networking: unknown };
    expect(raw.sync.toHost['endpoints']).toEqual({ enabled: false });
    expect(raw.sync.toHost['pods']).toEqual({ enabled: true });
    expect(raw.networking).toEqual({
      advanced: { clusterDomain: 'example.org', proxyKubelets: {} },
    });
  });

  it('treats null sections as absent', () => {
    const { config, diagnostics } = parse(
      'sync:\n  toHost:\n    endpoints:\n      patches:\nnetworking:\n',
    );
    expect(diagnostics).toEqual([]);
    expect(config?.resources.endpoints).toEqual({ enabled: true, patches: [] });
  });

  it('does not share state between calls (DEFAULTS stay frozen and unchanged)', () => {
    const a = parse(
      'sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n          a: b\n',
    );
    expect(a.config?.namespaces.mappings).toEqual({ a: 'b' });
    expect(parse('').config?.namespaces.mappings).toEqual({});
    expect(DEFAULTS.sync.toHost.namespaces.mappings.byName).toEqual({});
    expect(Object.isFrozen(DEFAULTS.sync.toHost.endpoints)).toBe(true);
  });

  it('accepts an empty or comment-only file with a warning', () => {
    for (const text of ['', '# nothing\n', '~\n']) {
      const { config, diagnostics } = parse(text);
      expect(config?.resources.endpoints.enabled).toBe(true);
      expect(diagnostics.map((d) => d.severity)).toEqual(['warning']);
    }
  });

  it('refuses a top level that is not a mapping', () => {
    expect(lines('- a\n- b\n')).toEqual([
      'test.yaml:1:1: error: the configuration must be a YAML mapping (key: value lines) at the top level, got a list; start with e.g. "sync:"',
    ]);
    expect(parse('just text').config).toBeUndefined();
  });

  it('reports YAML syntax errors with line and column and applies nothing', () => {
    const result = parse('sync:\n  toHost: [1, 2\nother: 3\n');
    expect(result.config).toBeUndefined();
    expect(result.diagnostics.length).toBeGreaterThan(0);
    // The unclosed [ is reported where it opens, not on the line where the library gave up.
    expect(result.diagnostics[0]).toMatchObject({
      severity: 'error',
      file: 'test.yaml',
      line: 2,
      column: 11,
    });
    expect(result.diagnostics[0]?.message).toMatch(/^YAML syntax: /);
  });

  it('reports duplicate keys, also inside patches, and still checks the rest', () => {
    expect(
      lines(
        `${endpointsPatches('- path: a', '  path: b', '  expression: "x"', '  reverseExpression: x')}sync: 1\n`,
      ),
    ).toEqual([
      'test.yaml:6:11: error: duplicate key "path": a key may appear only once in a mapping; remove one or merge them',
      'test.yaml:9:1: error: duplicate key "sync": a key may appear only once in a mapping; remove one or merge them',
      'test.yaml:9:7: error: sync must be a mapping (e.g. toHost: ...), got a number (sync)',
    ]);
  });

  it('refuses several documents in one file', () => {
    expect(lines('a: 1\n---\nb: 2\n')).toEqual([
      'test.yaml:2:1: error: the file holds more than one YAML document (a "---" line between them); a configuration is one document, merge them',
    ]);
  });

  it('resolves aliases in owned sections and refuses unknown or self-containing ones', () => {
    const ok = parse(
      'x: &expr \'"p-" + value\'\nsync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a\n          expression: *expr\n          reverseExpression: value.slice(2)\n',
    );
    // vcluster allows no top-level key of its own choosing, so the anchor's holder is warned about.
    expect(ok.diagnostics.map((d) => `${d.severity}: ${d.configPath}`)).toEqual(['warning: x']);
    expect(ok.config?.resources.endpoints.patches[0]?.expression).toBe('"p-" + value');
    expect(lines('a: *nope\n')).toEqual([
      'test.yaml:1:4: error: alias *nope names no anchor; define &nope before this alias',
    ]);
    expect(lines('a: &l [1, *l]\n')).toEqual([
      'test.yaml:1:11: error: alias *l is inside the node anchored as &l, which would make an endless value; copy the value instead',
    ]);
  });

  it('refuses alias bombs instead of expanding them', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      bomb.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    }
    const result = parse(`${bomb.join('\n')}\n`);
    expect(result.config).toBeUndefined();
    expect(
      result.diagnostics.some((d) =>
        /aliases \(\*name\) expand it to more than 2 MiB/.test(d.message),
      ),
    ).toBe(true);
  });

  it('sorts diagnostics in file order and collects all of them', () => {
    const result = parse(
      endpointsPatches(
        '- path: b',
        '  expression: value',
        '  reverseExpression: value',
        '- path: b',
        '  expression: "1 +"',
        '- {}',
      ),
    );
    const positions = result.diagnostics.map((d) => d.line * 1000 + d.column);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(result.diagnostics.filter((d) => d.severity === 'error').length).toBe(4);
  });
});

describe('owned sections: keys and types', () => {
  it('reports unknown keys inside owned sections with "did you mean"', () => {
    expect(
      lines('sync:\n  toHost:\n    endpoints:\n      enabeld: true\n      patch: []\n'),
    ).toEqual([
      'test.yaml:4:7: error: unknown key "enabeld" in sync.toHost.endpoints (did you mean "enabled"?); allowed keys: enabled, patches (sync.toHost.endpoints.enabeld)',
      'test.yaml:5:7: error: unknown key "patch" in sync.toHost.endpoints (did you mean "patches"?); allowed keys: enabled, patches (sync.toHost.endpoints.patch)',
    ]);
    expect(lines(endpointsPatches('- path: a', '  reverseExpresion: x'))).toContain(
      `test.yaml:6:11: error: unknown key "reverseExpresion" in a patch (did you mean "reverseExpression"?); allowed keys: path, expression, reverseExpression, reference (${LIST}[0].reverseExpresion)`,
    );
    expect(
      lines(
        endpointsPatches('- path: a', '  reference: {apiVersion: v1, kind: Secret, nmePath: n}'),
      ),
    ).toEqual([
      `test.yaml:6:53: error: unknown key "nmePath" in a reference (did you mean "namePath"?); allowed keys: apiVersion, kind, apiVersionPath, kindPath, namePath, namespacePath, labels (${LIST}[0].reference.nmePath)`,
    ]);
    expect(lines('sync:\n  toHost:\n    namespaces:\n      mapping: {}\n')[0]).toMatch(
      /unknown key "mapping" .*did you mean "mappings"/,
    );
  });

  it('refuses merge keys in owned sections with a clear reason', () => {
    const out = lines('base: &b {enabled: true}\nsync:\n  toHost:\n    endpoints:\n      <<: *b\n');
    expect(out).toContainEqual(
      expect.stringMatching(/unknown key "<<" .*merge keys are not supported/),
    );
  });

  it('reads an endpointSlices section without a warning, on or off (the forwarder watches slices)', () => {
    expect(lines('sync:\n  toHost:\n    endpointSlices:\n      enabled: true\n')).toEqual([]);
    expect(lines('sync:\n  toHost:\n    endpointSlices:\n      enabled: false\n')).toEqual([]);
  });

  it('warns on a top-level key that is not vcluster configuration (the wrong file?)', () => {
    expect(lines('apiVersion: v1\nkind: Secret\ncontrolPlane: {}\n')).toEqual([
      'test.yaml:1:1: warning: apiVersion is not a key of a vcluster configuration (vcluster would refuse the file); check that this is the right file, or remove the key (apiVersion)',
      'test.yaml:2:1: warning: kind is not a key of a vcluster configuration (vcluster would refuse the file); check that this is the right file, or remove the key (kind)',
    ]);
    expect(lines('controlplane: {}\n')).toEqual([
      'test.yaml:1:1: warning: controlplane is not read by endpoint-sync; did you mean "controlPlane"? (controlplane)',
    ]);
  });

  it('warns on near misses of owned keys outside the owned sections, ignores foreign keys', () => {
    expect(
      lines(
        'sync:\n  toHost:\n    endpoint:\n      enabled: false\n    pods: {}\n    ingresses: {}\n',
      ),
    ).toEqual([
      'test.yaml:3:5: warning: sync.toHost.endpoint is not read by endpoint-sync; did you mean "endpoints"? (sync.toHost.endpoint)',
    ]);
    expect(lines('sycn: {}\nnetworking:\n  advanced:\n    clusterDomian: x\n')).toEqual([
      'test.yaml:1:1: warning: sycn is not read by endpoint-sync; did you mean "sync"? (sycn)',
      'test.yaml:4:5: warning: networking.advanced.clusterDomian is not read by endpoint-sync; did you mean "clusterDomain"? (networking.advanced.clusterDomian)',
    ]);
  });

  it('accepts the reference project keys all and mappingsOnly with a warning', () => {
    const result = parse(
      'sync:\n  toHost:\n    secrets:\n      all: true\n    namespaces:\n      mappingsOnly: false\n',
    );
    expect(result.config).toBeDefined();
    expect(result.diagnostics.map((d) => d.configPath)).toEqual([
      'sync.toHost.secrets.all',
      'sync.toHost.namespaces.mappingsOnly',
    ]);
    expect(result.diagnostics.every((d) => d.severity === 'warning')).toBe(true);
    expect(lines('sync:\n  toHost:\n    endpoints:\n      all: true\n')[0]).toMatch(
      /error: unknown key "all"/,
    );
  });

  it('checks the type of every owned field, at the value', () => {
    expect(
      lines('sync:\n  toHost:\n    endpoints:\n      enabled: "true"\n      patches: {}\n'),
    ).toEqual([
      'test.yaml:4:16: error: sync.toHost.endpoints.enabled must be true or false, got a string; remove the quotes (sync.toHost.endpoints.enabled)',
      'test.yaml:5:16: error: sync.toHost.endpoints.patches must be a list of patches (each "- path: ..."), got a mapping (sync.toHost.endpoints.patches)',
    ]);
    expect(lines('sync:\n  toHost:\n    services:\n      enabled: off\n')[0]).toContain(
      'got a string; YAML 1.2 reads off as a string, write false',
    );
    expect(lines('sync: [1]\n')).toEqual([
      'test.yaml:1:7: error: sync must be a mapping (e.g. toHost: ...), got a list (sync)',
    ]);
    expect(lines('sync:\n  toHost: 3\n')[0]).toContain('sync.toHost must be a mapping');
    expect(lines('sync:\n  toHost:\n    secrets: true\n')[0]).toContain(
      'sync.toHost.secrets must be a mapping (enabled and patches), got the boolean true',
    );
    expect(
      lines(endpointsPatches('- path: 5', '  expression: [a]', '  reverseExpression: null')),
    ).toEqual([
      `test.yaml:5:17: error: ${LIST}[0].path must be a string, got a number; e.g. metadata.annotations[*] (${LIST}[0].path)`,
      `test.yaml:6:23: error: ${LIST}[0].expression must be a string, got a list; e.g. '"prefix-" + value' (${LIST}[0].expression)`,
      `test.yaml:7:30: error: ${LIST}[0].reverseExpression must be a string, got null; e.g. '"prefix-" + value' (${LIST}[0].reverseExpression)`,
    ]);
    expect(lines(endpointsPatches('- path: a', '  reference: Secret'))[0]).toContain(
      `${LIST}[0].reference must be a mapping with at least apiVersion and kind, got a string`,
    );
    expect(
      lines(
        endpointsPatches('- path: a', '  reference: {apiVersion: 1, kind: Secret, labels: [a]}'),
      ),
    ).toEqual([
      `test.yaml:6:35: error: ${LIST}[0].reference.apiVersion must be a string, got a number; e.g. v1 (${LIST}[0].reference.apiVersion)`,
      `test.yaml:6:52: error: ${LIST}[0].reference.labels: label-selector references are not supported (vcluster's reference has no labels key; its labels patches are a separate mode, for custom resources only); remove labels to treat the value at path as an object name (${LIST}[0].reference.labels)`,
    ]);
    expect(lines(endpointsPatches('- "just a string"'))).toEqual([
      `test.yaml:5:11: error: ${LIST}[0] must be a mapping with "path" and either "expression"/"reverseExpression" or "reference", got a string (${LIST}[0])`,
    ]);
  });

  it('refuses non-string keys in owned sections', () => {
    expect(lines('sync:\n  toHost:\n    endpoints:\n      1: x\n')[0]).toBe(
      'test.yaml:4:7: error: keys in sync.toHost.endpoints must be strings, got a number; quote the key (sync.toHost.endpoints)',
    );
  });

  it('validates the cluster domain as a DNS subdomain', () => {
    for (const good of ['cluster.local', 'a', 'my-cluster.example.com', 'x1.y2']) {
      expect(
        parse(`networking:\n  advanced:\n    clusterDomain: ${good}\n`).config?.clusterDomain,
      ).toBe(good);
    }
    for (const bad of [
      'Cluster.local',
      'cluster.local.',
      '-a.b',
      'a..b',
      'a_b',
      `${'a'.repeat(64)}.b`,
      '""',
    ]) {
      const out = lines(`networking:\n  advanced:\n    clusterDomain: ${bad}\n`);
      expect(out.length, bad).toBe(1);
      expect(out[0]).toMatch(
        /^test\.yaml:3:20: error: networking\.advanced\.clusterDomain is not a DNS subdomain \(label \d+: /,
      );
    }
    expect(lines('networking:\n  advanced:\n    clusterDomain: 5\n')[0]).toContain(
      'must be a string, got a number',
    );
  });

  it('reads namespace mappings and checks them', () => {
    const ok = parse(
      'sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n          team-a: host-team-a\n          "team-b": host-b\n',
    );
    expect(ok.diagnostics).toEqual([]);
    expect(ok.config?.namespaces).toEqual({
      enabled: true,
      mappings: { 'team-a': 'host-team-a', 'team-b': 'host-b' },
    });

    expect(
      lines(
        'sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n          Team.A: x\n          b: 7\n          c: y\n          d: y\n',
      ),
    ).toEqual([
      'test.yaml:7:11: error: sync.toHost.namespaces.mappings.byName["Team.A"]: the virtual namespace is not a valid namespace name (it has an uppercase letter); use at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit (sync.toHost.namespaces.mappings.byName["Team.A"])',
      'test.yaml:8:14: error: sync.toHost.namespaces.mappings.byName.b must be a string, got a number; e.g. team-a-host (sync.toHost.namespaces.mappings.byName.b)',
      'test.yaml:10:14: error: sync.toHost.namespaces.mappings.byName.d maps to the same host namespace as sync.toHost.namespaces.mappings.byName.c; their objects would collide, give each virtual namespace its own host namespace (sync.toHost.namespaces.mappings.byName.d)',
    ]);
    expect(
      lines('sync:\n  toHost:\n    namespaces:\n      mappings:\n        byName: {a: b}\n'),
    ).toEqual([
      'test.yaml:5:9: warning: sync.toHost.namespaces.mappings.byName has no effect while sync.toHost.namespaces.enabled is false (sync.toHost.namespaces.mappings.byName)',
    ]);
  });

  it('warns when Endpoints sync is off while Services sync is on (rule 8)', () => {
    expect(lines('sync:\n  toHost:\n    endpoints:\n      enabled: false\n')).toEqual([
      'test.yaml:4:16: warning: sync.toHost.endpoints.enabled is false while sync.toHost.services.enabled is true: Services that need manual Endpoints will have none on the host; enable Endpoints sync or disable Services sync (sync.toHost.endpoints.enabled)',
    ]);
    expect(
      lines(
        'sync:\n  toHost:\n    endpoints:\n      enabled: false\n    services:\n      enabled: false\n',
      ),
    ).toEqual([]);
  });
});

describe('patch rules (docs/configuration.md)', () => {
  it('fills in configPath and position of each patch', () => {
    const { config } = parse(
      endpointsPatches(
        '- path: a',
        '  expression: value',
        '  reverseExpression: value',
        '- path: ""',
        '  reference: {apiVersion: v1, kind: Secret}',
      ),
    );
    expect(config?.resources.endpoints.patches).toEqual([
      {
        path: 'a',
        expression: 'value',
        reverseExpression: 'value',
        configPath: `${LIST}[0]`,
        position: { file: 'test.yaml', line: 5, column: 11 },
      },
      {
        path: '',
        reference: { apiVersion: 'v1', kind: 'Secret' },
        configPath: `${LIST}[1]`,
        position: { file: 'test.yaml', line: 8, column: 11 },
      },
    ]);
  });

  it('rule 1: every patch has a path; the empty path is allowed', () => {
    expect(lines(endpointsPatches('- expression: value', '  reverseExpression: value'))).toEqual([
      `test.yaml:5:11: error: ${LIST}[0] has no "path"; add the path of the field to patch, e.g. path: metadata.annotations["example.com/owner"] (the empty string "" is the whole object) (${LIST}[0])`,
    ]);
    expect(
      parse(endpointsPatches('- path: ""', '  expression: value', '  reverseExpression: value'))
        .config,
    ).toBeDefined();
  });

  it('rule 2: exactly one mode, with the exact messages', () => {
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  expression: value',
          '  reference: {apiVersion: v1, kind: Secret}',
        ),
      ),
    ).toEqual([
      `test.yaml:7:11: error: ${LIST}[0] can only use one of: expression or reference (${LIST}[0])`,
    ]);
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  reverseExpression: value',
          '  reference: {apiVersion: v1, kind: Secret}',
        ),
      )[0],
    ).toContain(`${LIST}[0] can only use one of: expression or reference`);
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  expression: value',
          '  reverseExpression: value',
          '- path: b',
        ),
      ),
    ).toEqual([
      `test.yaml:8:11: error: ${LIST}[1] need to use one of: expression or reference (${LIST}[1])`,
    ]);
    const secrets = parse('sync:\n  toHost:\n    secrets:\n      patches:\n        - path: a\n');
    expect(secrets.diagnostics[0]?.message).toBe(
      'sync.toHost.secrets.patches[0] need to use one of: expression or reference',
    );
  });

  it('rule 3: same path in the same direction is an error naming both indices', () => {
    expect(
      lines(
        endpointsPatches(
          '- path: metadata.annotations.a',
          '  expression: value',
          '  reverseExpression: value',
          '- path: x',
          '  expression: value',
          '  reverseExpression: value',
          '- path: metadata.annotations["a"]',
          '  expression: value + "1"',
        ),
      ),
    ).toEqual([
      `test.yaml:11:17: error: ${LIST}[0] and ${LIST}[2] both patch the same path in the toHost direction; merge them into one patch (two items may share a path only when one has only expression and the other only reverseExpression) (${LIST}[2])`,
    ]);
    // A reference acts in both directions.
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  reverseExpression: value',
          '- path: a',
          '  reference: {apiVersion: v1, kind: Secret}',
        ),
      )[0],
    ).toContain(`${LIST}[0] and ${LIST}[1] both patch the same path in the fromHost direction`);
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  reference: {apiVersion: v1, kind: Secret}',
          '- path: a',
          '  reference: {apiVersion: v1, kind: ConfigMap}',
        ),
      )[0],
    ).toContain('in the toHost and fromHost directions');
  });

  it('rule 3: one expression-only and one reverseExpression-only item may share a path, without a warning', () => {
    const result = parse(
      endpointsPatches(
        '- path: data[*]',
        '  expression: btoa(value)',
        '- path: data[*]',
        '  reverseExpression: atob(value)',
      ),
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.config?.resources.endpoints.patches).toHaveLength(2);
  });

  it('rule 4: metadata.name and metadata.namespace cannot be patched, however spelt', () => {
    for (const path of [
      'metadata.name',
      'metadata["name"]',
      '"metadata".namespace',
      'metadata[namespace]',
      'metadata[*]',
      '*.name',
      '[*][*]',
    ]) {
      const out = lines(
        endpointsPatches(`- path: '${path}'`, '  expression: value', '  reverseExpression: value'),
      );
      expect(out.length, path).toBe(1);
      expect(out[0]).toMatch(/^test\.yaml:5:17: error: .*would patch metadata\.(name|namespace)/);
    }
    expect(
      lines(
        endpointsPatches("- path: 'metadata[*]'", '  reference: {apiVersion: v1, kind: Secret}'),
      )[0],
    ).toContain('would patch metadata.name and metadata.namespace');
    for (const path of [
      'metadata.labels.name',
      'metadata.names',
      'spec.name',
      'metadata',
      'metadata.name.x',
    ]) {
      expect(
        lines(
          endpointsPatches(
            `- path: '${path}'`,
            '  expression: value',
            '  reverseExpression: value',
          ),
        ),
        path,
      ).toEqual([]);
    }
  });

  it('rule 5: reference apiVersion and kind are required; every *Path is optional', () => {
    expect(
      lines(
        endpointsPatches('- path: a', '  reference:', '    kindPath: k', '    apiVersionPath: v'),
      ),
    ).toEqual([
      `test.yaml:7:13: error: ${LIST}[0].reference has no "apiVersion"; it is required (the apiVersion of the referenced object, e.g. apiVersion: v1), also when apiVersionPath is set (${LIST}[0].reference.apiVersion)`,
      `test.yaml:7:13: error: ${LIST}[0].reference has no "kind"; it is required (the kind of the referenced object, e.g. kind: Secret), also when kindPath is set (${LIST}[0].reference.kind)`,
    ]);
    // Without namePath the value at path is the name; the other *Paths are read beside it.
    const withoutName = parse(
      endpointsPatches(
        '- path: spec.ref.name',
        '  reference: {apiVersion: v1, kind: Secret, namespacePath: namespace, kindPath: kind}',
      ),
    );
    expect(withoutName.diagnostics).toEqual([]);
    expect(withoutName.config?.resources.endpoints.patches[0]?.reference).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      namespacePath: 'namespace',
      kindPath: 'kind',
    });
    expect(
      lines(endpointsPatches('- path: a', '  reference: {apiVersion: "", kind: Secret}'))[0],
    ).toContain(`${LIST}[0].reference.apiVersion is empty`);
    const full = parse(
      endpointsPatches(
        '- path: spec.ref',
        '  reference:',
        '    apiVersion: v1',
        '    kind: Secret',
        '    namePath: name',
        '    namespacePath: ns',
        '    kindPath: kind',
        '    apiVersionPath: apiVersion',
      ),
    );
    expect(full.diagnostics).toEqual([]);
    expect(full.config?.resources.endpoints.patches[0]?.reference).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      namePath: 'name',
      namespacePath: 'ns',
      kindPath: 'kind',
      apiVersionPath: 'apiVersion',
    });
  });

  it('refuses a kind vcluster has no mapper for (a near miss names the kind), and warns about a wrong apiVersion for a known kind', () => {
    const [secret] = lines(
      endpointsPatches('- path: a', '  reference: {apiVersion: v1, kind: secret}'),
    );
    expect(secret).toContain(
      `test.yaml:6:45: error: ${LIST}[0].reference.kind names a kind vcluster has no mapper for, so it cannot be a reference (kinds are case-sensitive); did you mean "Secret"?; reference patches may name Secret, ConfigMap,`,
    );
    expect(
      lines(
        endpointsPatches('- path: a', '  reference: {apiVersion: apps/v1, kind: ConfigMap}'),
      )[0],
    ).toContain(
      `warning: ${LIST}[0].reference.apiVersion is not v1, but ConfigMap has apiVersion v1`,
    );
    // A kind outside the core group is held to its own group's version, not to v1.
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  reference: {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice}',
        ),
      ),
    ).toEqual([]);
    expect(
      lines(endpointsPatches('- path: a', '  reference: {apiVersion: v1, kind: EndpointSlice}'))[0],
    ).toContain(
      `warning: ${LIST}[0].reference.apiVersion is not discovery.k8s.io/v1, but EndpointSlice has apiVersion discovery.k8s.io/v1`,
    );
    const [widget] = lines(
      endpointsPatches('- path: a', '  reference: {apiVersion: example.com/v1, kind: Widget}'),
    );
    expect(widget).toContain('error: ');
    expect(widget).toContain('names a kind vcluster has no mapper for');
  });

  it('rule 6: expressions must compile, reported at their own position', () => {
    expect(
      lines(endpointsPatches('- path: a', '  expression: value +', '  reverseExpression: "x; y"')),
    ).toEqual([
      `test.yaml:6:30: error: ${LIST}[0].expression is not a valid expression (line 1, column 8 of the expression): syntax error: Unexpected token (${LIST}[0].expression)`,
      `test.yaml:7:32: error: ${LIST}[0].reverseExpression is not a valid expression (line 1, column 2 of the expression): expected the end of the expression; a patch is one expression, not statements (use a ternary, \`&&\`/\`||\`/\`??\` or an arrow-function IIFE instead) (${LIST}[0].reverseExpression)`,
    ]);
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  expression: |',
          '    value',
          '      .trim(',
          '      )) + 1',
          '  reverseExpression: value',
        ),
      ),
    ).toEqual([
      `test.yaml:9:16: error: ${LIST}[0].expression is not a valid expression (line 3, column 4 of the expression): expected the end of the expression; a patch is one expression, not statements (use a ternary, \`&&\`/\`||\`/\`??\` or an arrow-function IIFE instead) (${LIST}[0].expression)`,
    ]);
    expect(
      lines(endpointsPatches('- path: a', '  expression: ""', '  reverseExpression: import("fs")')),
    ).toEqual([
      `test.yaml:6:24: error: ${LIST}[0].expression is not a valid expression (line 1, column 1 of the expression): expression is empty; write one JavaScript expression, e.g. "value" (${LIST}[0].expression)`,
      `test.yaml:7:30: error: ${LIST}[0].reverseExpression is not a valid expression (line 1, column 1 of the expression): import() is not available in expressions (${LIST}[0].reverseExpression)`,
    ]);
  });

  it('rule 7: paths must parse, reported at the offending character', () => {
    const cases: [string, number, string][] = [
      ['a[', 2, 'unclosed "["'],
      ['a["b]', 3, 'unclosed quote'],
      ['a[]', 2, 'empty "[]"'],
      ['a]', 2, '"]" without a matching "["'],
      ['a..b', 3, 'empty segment'],
    ];
    for (const [path, column, reason] of cases) {
      const out = lines(
        endpointsPatches(`- path: '${path}'`, '  expression: value', '  reverseExpression: value'),
      );
      expect(out, path).toHaveLength(1);
      expect(out[0]).toContain(
        `test.yaml:5:${17 + column}: error: ${LIST}[0].path is not a valid path (column ${column}): ${reason}`,
      );
    }
    expect(
      lines(
        endpointsPatches(
          '- path: a',
          '  reference: {apiVersion: v1, kind: Secret, namePath: "x[", namespacePath: "[]"}',
        ),
      ),
    ).toEqual([
      `test.yaml:6:65: error: ${LIST}[0].reference.namePath is not a valid path (column 2): unclosed "["; end the segment with "]" (${LIST}[0].reference.namePath)`,
      `test.yaml:6:85: error: ${LIST}[0].reference.namespacePath is not a valid path (column 1): empty "[]"; put a key, an index or * inside the brackets (${LIST}[0].reference.namespacePath)`,
    ]);
  });

  it('rule 8: warns about a patch with one direction only', () => {
    expect(lines(endpointsPatches('- path: a', '  expression: \'"x"\''))).toEqual([
      `test.yaml:5:17: warning: ${LIST}[0] has an expression but no reverseExpression: the object will be changed unintentionally when it returns to the virtual cluster; add a reverseExpression that undoes the expression (here or in another patch with the same path) (${LIST}[0])`,
    ]);
    const reverseOnly = parse(endpointsPatches('- path: a', '  reverseExpression: value'));
    expect(reverseOnly.config).toBeDefined();
    expect(reverseOnly.diagnostics[0]?.message).toContain(
      'has a reverseExpression but no expression',
    );
    expect(
      lines(endpointsPatches('- path: a', '  reference: {apiVersion: v1, kind: Secret}')),
    ).toEqual([]);
  });

  it('checks every owned resource list, not only endpoints', () => {
    for (const resource of ['services', 'secrets', 'configMaps']) {
      const result = parse(
        `sync:\n  toHost:\n    ${resource}:\n      patches:\n        - path: a\n          expression: "("\n`,
      );
      expect(result.diagnostics[0]?.configPath).toBe(
        `sync.toHost.${resource}.patches[0].expression`,
      );
    }
  });

  it('does not look at patches outside the owned sections', () => {
    expect(
      lines(
        'sync:\n  toHost:\n    pods:\n      patches:\n        - path: metadata.name\n          expression: "("\n',
      ),
    ).toEqual([]);
  });

  it('a valid file with only warnings still yields a config', () => {
    const result = parseConfig(endpointsPatches('- path: a', '  expression: value'), 'w.yaml');
    expect(result.diagnostics).toHaveLength(1);
    expect(result.config?.resources.endpoints.patches).toHaveLength(1);
  });
});
