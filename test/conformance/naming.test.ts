/**
 * Host names and label keys as vcluster translates them: SafeConcatName and
 * SingleNamespaceHostName (pkg/util/translate), HostLabel / VirtualLabel (labels.go) and the
 * cases of vcluster's TestVirtualLabels and TestNotRewritingLabels (translate_test.go).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  hostName,
  originalLabelKey,
  safeConcatName,
  translateLabelKey,
} from '../../lib/naming/index.ts';
import { type Conformance, source } from './vcluster.ts';

const D = 'vcluster.loft.sh';
// vcluster's tests run with VClusterName = "suffix".
const VC = 'suffix';

interface NamingCase {
  name: string;
  source: string;
  conformance: Conformance;
  actual: () => string | undefined;
  expected: string | undefined;
}

const TRANSLATE = source('pkg/util/translate/translate.go');
const SINGLE = source('pkg/util/translate/single_namespace.go');
const LABELS = source('pkg/util/translate/labels.go');
const TRANSLATE_TEST = source('pkg/util/translate/translate_test.go');

const long = `${'a'.repeat(40)}-x-my-namespace-x-my-vcluster`;

const cases: NamingCase[] = [
  {
    name: 'a short join is kept',
    source: `${TRANSLATE} SafeConcatName`,
    conformance: 'same',
    actual: () => safeConcatName('my-svc', 'x', 'default', 'x', 'vc'),
    expected: 'my-svc-x-default-x-vc',
  },
  {
    name: 'a join over 63 characters: 52 characters, "-", 10 hex digits of its SHA-256',
    source: `${TRANSLATE} SafeConcatName`,
    conformance: 'same',
    actual: () => hostName('a'.repeat(40), 'my-namespace', 'my-vcluster'),
    expected: `${long.slice(0, 52)}-${createHash('sha256').update(long).digest('hex').slice(0, 10)}`,
  },
  {
    name: 'a cut that leaves ".-" becomes "-"',
    source: `${TRANSLATE} SafeConcatName (ReplaceAll ".-")`,
    conformance: 'same',
    actual: () => safeConcatName(`${'b'.repeat(51)}.cc`, 'x', 'ns', 'x', 'vc').slice(50, 53),
    expected:
      'b-' +
      createHash('sha256')
        .update(`${'b'.repeat(51)}.cc-x-ns-x-vc`)
        .digest('hex')
        .slice(0, 1),
  },
  {
    name: 'host name of an object: name-x-namespace-x-vcluster',
    source: `${SINGLE} SingleNamespaceHostName`,
    conformance: 'same',
    actual: () => hostName('test', 'test', VC),
    expected: 'test-x-test-x-suffix',
  },
  {
    name: 'release is translated to <domain>/label-<vc>-x-<10 hex of sha256(key)>',
    source: `${LABELS} HostLabel, ${SINGLE} LabelsToTranslate`,
    conformance: 'same',
    actual: () => translateLabelKey('release', VC, D),
    expected: `${D}/label-suffix-x-a4d451ec23`,
  },
  {
    name: 'the translated release key turns back into release',
    source: `${TRANSLATE_TEST} TestVirtualLabels`,
    conformance: 'same',
    actual: () => originalLabelKey(`${D}/label-suffix-x-a4d451ec23`, VC, D),
    expected: 'release',
  },
  {
    name: 'the managed-by, namespace and controlled-by keys are translated too',
    source: `${SINGLE} LabelsToTranslate`,
    conformance: 'same',
    actual: () =>
      [`${D}/managed-by`, `${D}/namespace`, `${D}/controlled-by`]
        .map((k) => (translateLabelKey(k, VC, D).startsWith(`${D}/label-suffix-x-`) ? 'y' : 'n'))
        .join(''),
    expected: 'yyy',
  },
  {
    name: 'an ordinary key is not rewritten, either way',
    source: `${TRANSLATE_TEST} TestNotRewritingLabels`,
    conformance: 'same',
    actual: () => `${translateLabelKey('app', VC, D)} ${originalLabelKey('app', VC, D)}`,
    expected: 'app app',
  },
  {
    name: 'a host marker key has no virtual counterpart',
    source: `${LABELS} VirtualLabel (LabelsToTranslate keys give "", false)`,
    conformance: 'same',
    actual: () => originalLabelKey(`${D}/managed-by`, VC, D),
    expected: undefined,
  },
];

describe('names and label keys', () => {
  it.each(cases)('$name [$conformance]', (c) => {
    expect(c.actual(), c.source).toBe(c.expected);
  });
});
