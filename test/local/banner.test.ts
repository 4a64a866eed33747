/**
 * The lines `npm start` prints once the stack is up: every address, the S3 credentials and
 * commands that can be pasted as they are.
 */
import { describe, expect, it } from 'vitest';
import { type BannerStack, httpUrl, shellWord, stackBanner } from '../../lib/local/banner.ts';

const FN = 'endpoint-sync-dev-sync';

function stack(overrides: Partial<BannerStack> = {}): BannerStack {
  return {
    identity: { name: 'vc', hostNamespace: 'vc-host', markerDomain: 'virtualcluster.loft.sh' },
    virtual: {
      emulator: { url: 'http://127.0.0.1:1001' },
      kubeconfigPath: '/tmp/d/virtual.kubeconfig',
    },
    host: { emulator: { url: 'http://127.0.0.1:1002' }, kubeconfigPath: '/tmp/d/host.kubeconfig' },
    configUri: 's3://endpoint-sync/config.yaml',
    objectStore: {
      endpoint: 'http://127.0.0.1:4569',
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    },
    lambda: { endpoint: 'http://127.0.0.1:3002', region: 'us-east-1' },
    forwarder: { metricsAddress: { host: '127.0.0.1', port: 9100 } },
    ...overrides,
  };
}

describe('the npm start banner', () => {
  it('prints the playground page when dev serves one, and nothing of it otherwise', () => {
    const lines = stackBanner(stack({ playground: { url: 'http://127.0.0.1:8790/' } }), FN);
    expect(lines).toContain(
      '  playground       http://127.0.0.1:8790/ (every synced object live; edit and render any of them)',
    );
    expect(stackBanner(stack(), FN).join('\n')).not.toContain('playground');
  });

  it('prints the metrics address as a URL, never as an object', () => {
    const text = stackBanner(stack(), FN).join('\n');
    expect(text).toContain('http://127.0.0.1:9100/metrics');
    expect(text).toContain('http://127.0.0.1:9100/healthz');
    expect(text).not.toContain('[object');
  });

  it('names the S3 endpoint and its credentials, and the Lambda endpoint', () => {
    const lines = stackBanner(stack(), FN);
    expect(lines).toContain(
      '  local S3         http://127.0.0.1:4569 (path-style; access key S3RVER, secret key S3RVER, region us-east-1)',
    );
    expect(lines).toContain(
      '      export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_DEFAULT_REGION=us-east-1',
    );
    const text = lines.join('\n');
    expect(text).toContain(
      'aws --endpoint-url http://127.0.0.1:4569 s3 cp s3://endpoint-sync/config.yaml -',
    );
    expect(text).toContain('aws --endpoint-url http://127.0.0.1:3002 lambda list-functions');
    expect(text).toContain(
      `aws --endpoint-url http://127.0.0.1:3002 lambda get-function-configuration --function-name ${FN}`,
    );
    expect(text).toContain('kubectl --kubeconfig /tmp/d/host.kubeconfig get endpoints -n vc-host');
  });

  it('types no JSON payload on a command line, which AWS CLI v1 and v2 read differently', () => {
    const invokes = stackBanner(stack(), FN).filter((l) => l.includes(' lambda invoke '));
    expect(invokes.map((l) => l.trim().replace(/\s+# .*$/, ''))).toEqual([
      `aws --endpoint-url http://127.0.0.1:3002 lambda invoke --function-name ${FN} --invocation-type DryRun /dev/null`,
      `aws --endpoint-url http://127.0.0.1:3002 lambda invoke --function-name ${FN} --log-type Tail --query LogResult --output text /dev/null | base64 -d`,
    ]);
    expect(invokes.join('\n')).not.toContain('--payload');
  });

  it('leaves out S3 and metrics when there are none, and quotes paths a shell would split', () => {
    const { objectStore: _, ...withoutS3 } = stack({
      configUri: 'file:///tmp/my%20config.yaml',
      forwarder: { metricsAddress: undefined },
      virtual: { kubeconfigPath: "/tmp/it's here/virtual.kubeconfig" },
    });
    const text = stackBanner(withoutS3, FN).join('\n');
    expect(text).not.toMatch(/ s3 |local S3|metrics/);
    expect(text).toContain('from --virtual-kubeconfig');
    expect(text).toContain(`kubectl --kubeconfig '/tmp/it'\\''s here/virtual.kubeconfig' get`);
    expect(text).toContain('export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local');
  });

  it('brackets IPv6 hosts and leaves plain words unquoted', () => {
    expect(httpUrl({ host: '::1', port: 80 })).toBe('http://[::1]:80');
    expect(httpUrl({ host: '0.0.0.0', port: 9 })).toBe('http://0.0.0.0:9');
    expect(shellWord('/tmp/a-b_c.d/x.kubeconfig')).toBe('/tmp/a-b_c.d/x.kubeconfig');
    expect(shellWord('a b')).toBe("'a b'");
    expect(shellWord('$HOME')).toBe("'$HOME'");
  });
});
