/**
 * v1 Secrets, copied when a reference patch names them. One rule beyond the generic ones, as in
 * vcluster's Secrets syncer (`SyncToHost`): a copy of a `kubernetes.io/service-account-token`
 * Secret is `Opaque`. A Secret of that type on the host is filled in by the host's token
 * controller with a token of the host ServiceAccount its annotation names, so a copy of that
 * type would let a tenant have a host ServiceAccount's token minted in a host namespace. The
 * type is translated on the way to the host, and a patch that sets it on the copy is overruled.
 */
import { cloneJson, jsonEqual, syncedRow } from '../../model/index.ts';
import { type FieldCopier, plainKind, type SyncKind } from './kind.ts';

/** The Secret type the host's token controller fills with a ServiceAccount token. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';

/** What a copy carries instead of {@link SERVICE_ACCOUNT_TOKEN_TYPE}. */
export const OPAQUE_TYPE = 'Opaque';

function hostType(value: unknown): unknown {
  return value === SERVICE_ACCOUNT_TOKEN_TYPE ? OPAQUE_TYPE : cloneJson(value);
}

const SECRET_TYPE: FieldCopier = {
  copy: (value) => hostType(value),
  equals: (value, host) => jsonEqual(hostType(value), host),
};

export const SECRET_KIND: SyncKind = {
  ...plainKind(syncedRow('secrets')),
  specFields: { type: SECRET_TYPE },
  immutableFields: ['type'],
  finishHost: (_labels, { copy }) => {
    if (copy['type'] === SERVICE_ACCOUNT_TOKEN_TYPE) copy['type'] = OPAQUE_TYPE;
  },
};
