import { describe, expect, it } from 'vitest';
import { awsFailure } from '../../lib/functions/aws-sdk.ts';

const sdkError = (name: string, status?: number, message = 'secret-looking text: s3cr3t') =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });

describe('awsFailure: what an AWS error asks of the operator', () => {
  it.each([
    ['AccessDeniedException', 400, false, /grant the function's role kms:Decrypt/],
    ['SomethingElse', 403, false, /grant the function's role kms:Decrypt/],
    ['ResourceNotFoundException', 400, false, /^create it$/],
    ['ParameterNotFound', 400, false, /^create it$/],
    ['ThrottlingException', 400, true, /retrying later/],
    ['TimeoutError', undefined, true, /retrying later/],
  ])('%s (%s): retryable %s', (name, status, retryable, advice) => {
    const failure = awsFailure(sdkError(name, status), 'kms:Decrypt', 'create it');
    expect(failure.retryable).toBe(retryable);
    expect(failure.advice).toMatch(advice);
    expect(failure.label).toBe(status ? `${name} ${status}` : name);
  });

  it("never carries the error's own message", () => {
    const failure = awsFailure(sdkError('AccessDeniedException', 403), 'x', 'y');
    expect(JSON.stringify(failure)).not.toContain('s3cr3t');
  });
});
