/**
 * What a bundle gets for `import ... from 'undici'` (scripts/kube-client-trim.ts): the names
 * @kubernetes/client-node's KubeConfig and lib/kube's transport use (`Agent`, `ProxyAgent`, and
 * the dispatchers' `request`), taken from the modules that define them. undici's own entry point
 * is CommonJS, which a bundler cannot trim, and loads everything it exports (fetch, WebSocket,
 * EventSource, the cache stores, the mocks, the interceptors): about a fifth of the bundle, and a
 * process holds about 10 MB of memory per MB of code it loads. lib/kube sends with the dispatcher
 * API, so `fetch` (and the WHATWG layer under it) stays out too.
 */
'use strict';

const Dispatcher = require('undici/lib/dispatcher/dispatcher');
const api = require('undici/lib/api');

// As undici's entry point does: the Dispatcher methods (request, connect, ...) come from `api`;
// lib/kube sends with `request`, ProxyAgent tunnels through `connect`.
Object.assign(Dispatcher.prototype, api);

module.exports.Agent = require('undici/lib/dispatcher/agent');
module.exports.ProxyAgent = require('undici/lib/dispatcher/proxy-agent');

/**
 * client-node's fetch-based modules import `fetch`; the bundles reach them only through imports
 * lib/kube does not call. Should code come to call it, it fails saying why.
 */
module.exports.fetch = function fetch() {
  return Promise.reject(
    new Error('undici fetch is not bundled: send Kubernetes requests through lib/kube (its transport uses the dispatcher API)'),
  );
};
