# The forwarder's image: deploy/deployment.yaml runs `node forward.mjs` (the `forward` command
# bundled by scripts/build-forwarder.ts: one file with its dependencies, no TypeScript loader).
#   docker build -t registry.example.com/endpoint-sync:0.1.0 .
FROM node:22-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node scripts/build-forwarder.ts

FROM node:22-slim
WORKDIR /app
COPY --from=build /src/dist/forwarder/forward.mjs ./forward.mjs
USER node
ENTRYPOINT ["node", "forward.mjs"]
CMD ["--help"]
