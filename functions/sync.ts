/**
 * The `sync` Lambda function (serverless.yml): event v1 in, result v1 out. Thin on purpose: the
 * logic is in lib/functions/. Created once per process, so the configuration cache, the host
 * client and the expression engine survive warm invocations.
 */
import { createSyncHandlerFromEnv } from '../lib/functions/index.ts';

/** The Lambda handler (`functions/sync.handler`). */
export const handler = createSyncHandlerFromEnv(process.env);
