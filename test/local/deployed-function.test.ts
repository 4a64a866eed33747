/**
 * The local stack describes its function as serverless.yml deploys it: get-function-configuration
 * against `npm start` reports serverless.yml's memory, timeout, architecture, runtime, handler and
 * description (it reported 1024 MB, 30 s and x86_64 whatever the file said). The stack also
 * writes the tenant's key file for `endpoint-sync sign`, readable by its user only, and removes
 * it when it stops.
 */
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deployedFunction, SERVERLESS_FILE } from '../../lib/local/serverless-function.ts';
import { LOCAL_FUNCTION_NAME, startStack } from '../../lib/local/stack.ts';
import { parseForwarderKey } from '../../lib/tenancy/index.ts';

/** serverless.yml as the framework reads it, for the values the stack must report. */
const serverless = parse(readFileSync(SERVERLESS_FILE, 'utf8')) as {
  provider: { memorySize: number; timeout: number; architecture: string; runtime: string };
  functions: { sync: { handler: string; description: string } };
};

describe('deployedFunction', () => {
  it('reads the sync function of serverless.yml', () => {
    expect(deployedFunction('sync')).toEqual({
      memorySize: serverless.provider.memorySize,
      timeoutSeconds: serverless.provider.timeout,
      architecture: serverless.provider.architecture,
      runtime: serverless.provider.runtime,
      handlerName: serverless.functions.sync.handler,
      description: serverless.functions.sync.description,
    });
  });

  it("takes the function's own settings over provider's, and the framework's defaults", () => {
    const text = `provider:
  memorySize: 512
  timeout: 60
functions:
  sync:
    handler: a.b
    memorySize: 256
    architecture: arm64
`;
    expect(deployedFunction('sync', text)).toEqual({
      handlerName: 'a.b',
      description: '',
      runtime: 'nodejs22.x',
      memorySize: 256,
      timeoutSeconds: 60,
      architecture: 'arm64',
    });
    expect(deployedFunction('sync', 'functions:\n  sync: {}\n')).toMatchObject({
      memorySize: 1024,
      timeoutSeconds: 6,
      architecture: 'x86_64',
    });
  });

  it('names the file and the field of a value no deployment could have', () => {
    const with_ = (provider: string) => `provider:\n  ${provider}\nfunctions:\n  sync: {}\n`;
    // A framework variable, which only the framework resolves.
    const variable = ['$', '{param:memory}'].join('');
    expect(() => deployedFunction('sync', with_(`memorySize: ${variable}`), 'f.yml')).toThrow(
      'f.yml: provider.memorySize must be a whole number, as Lambda takes it',
    );
    expect(() => deployedFunction('sync', with_('architecture: arm'), 'f.yml')).toThrow(
      'f.yml: provider.architecture must be x86_64 or arm64',
    );
    expect(() => deployedFunction('other', with_('timeout: 3'), 'f.yml')).toThrow(
      'f.yml: functions.other is missing',
    );
  });
});

it('get-function-configuration on the local stack reports what serverless.yml deploys; the key file is private and goes on stop', async () => {
  const stack = await startStack({ startForwarder: false, echoFunctionLogs: false });
  let keyFile: string;
  try {
    const client = new LambdaClient({
      endpoint: stack.lambda.endpoint,
      region: stack.lambda.region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    const config = await client.send(
      new GetFunctionConfigurationCommand({ FunctionName: LOCAL_FUNCTION_NAME }),
    );
    client.destroy();
    expect(config).toMatchObject({
      MemorySize: serverless.provider.memorySize,
      Timeout: serverless.provider.timeout,
      Architectures: [serverless.provider.architecture],
      Runtime: serverless.provider.runtime,
      Handler: serverless.functions.sync.handler,
      Description: serverless.functions.sync.description,
    });
    keyFile = stack.signingKeyFile;
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect(parseForwarderKey(readFileSync(keyFile, 'utf8'), keyFile)).toMatchObject({
      tenant: stack.signingKey.tenant,
      keyId: stack.signingKey.keyId,
    });
  } finally {
    await stack.close();
  }
  await expect(stat(keyFile)).rejects.toMatchObject({ code: 'ENOENT' });
}, 60_000);
