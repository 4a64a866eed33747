# syntax=docker/dockerfile:1
# The forwarder's image: deploy/base/deployment.yaml runs `node forward.mjs` (the `forward` command
# bundled by scripts/build-forwarder.ts: one file with its dependencies, no TypeScript loader).
#
#   docker build -t registry.example.com/endpoint-sync:0.1.0 .
#   buildah bud --layers -t registry.example.com/endpoint-sync:0.1.0 .
#
# Behind a TLS-intercepting proxy, hand the proxy's CA to `npm ci` as a build secret (it is not
# stored in any layer):
#   docker build --secret id=ca,src=/path/to/proxy-ca.pem .
#   buildah bud --secret id=ca,src=/path/to/proxy-ca.pem .
#
# NODE_IMAGE is pinned by digest (the multi-platform index of node:22-slim), so a rebuild gets the
# same base until someone moves the pin on purpose: `skopeo inspect --format '{{.Digest}}'
# docker://docker.io/library/node:22-slim` (or `docker buildx imagetools inspect`) gives the
# current one. A mirror or an air-gapped build passes its own: --build-arg NODE_IMAGE=...
ARG NODE_IMAGE=docker.io/library/node:22-slim@sha256:83f487e0a63425e5b4d146fb5e5be574bcbe1b7b843d3ebafdd95eaf7767a7e5
#
# A bundle built outside replaces the `build` stage (which is then skipped), e.g. to build offline:
#   buildah bud --build-context build=DIR .     (DIR holds src/dist/forwarder/forward.mjs)

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The CA secret is optional: without it npm trusts the image's own CA bundle only.
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi; \
    npm ci --no-audit --no-fund --ignore-scripts
COPY . .
# --experimental-strip-types: any Node 22 runs the TypeScript build script (22.18+ needs no flag).
RUN node --experimental-strip-types scripts/build-forwarder.ts

FROM ${NODE_IMAGE}
WORKDIR /app
COPY --from=build /src/dist/forwarder/forward.mjs ./forward.mjs
# The Deployment's uid/gid (deploy/base/deployment.yaml runAsUser/runAsGroup): numeric, so the
# kubelet's runAsNonRoot check can verify it without reading /etc/passwd. The file is owned by
# root and only readable: the process cannot change its own code, and the Deployment mounts the
# root filesystem read-only with every capability dropped.
USER 65532:65532
ENTRYPOINT ["node", "forward.mjs"]
CMD ["--help"]
