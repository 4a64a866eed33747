/**
 * What a bundle gets for `import ... from 'undici'` (scripts/kube-client-trim.ts): the
 * three names @kubernetes/client-node's transport uses (`Agent` and `ProxyAgent` in its
 * KubeConfig, `fetch` in its HTTP library), taken from the modules that define them. undici's
 * own entry point is CommonJS, which a bundler cannot trim, and loads everything it exports
 * (WebSocket, EventSource, the cache stores, the mocks, the interceptors): about a fifth of the
 * bundle, and a process holds about 10 MB of memory per MB of code it loads.
 */
'use strict';

const Dispatcher = require('undici/lib/dispatcher/dispatcher');
const api = require('undici/lib/api');
const fetchImpl = require('undici/lib/web/fetch').fetch;

// As undici's entry point does: the Dispatcher methods (connect, request, ...) come from `api`;
// ProxyAgent tunnels through `connect`.
Object.assign(Dispatcher.prototype, api);

module.exports.Agent = require('undici/lib/dispatcher/agent');
module.exports.ProxyAgent = require('undici/lib/dispatcher/proxy-agent');

/** undici's `fetch`; like its entry point's, a rejection's stack shows the caller. */
module.exports.fetch = function fetch(init, options = undefined) {
  return fetchImpl(init, options).catch((err) => {
    if (err && typeof err === 'object') Error.captureStackTrace(err, module.exports.fetch);
    throw err;
  });
};
