# The forwarder's image (deploy/ runs `node bin/endpoint-sync.js forward` in it). Node runs the
# TypeScript sources directly, so the image is the sources plus the runtime dependencies.
#   docker build -t registry.example.com/endpoint-sync:0.1.0 .
FROM node:22-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY lib ./lib
COPY functions ./functions
COPY schema ./schema
COPY examples ./examples
USER node
ENTRYPOINT ["node", "bin/endpoint-sync.js"]
CMD ["--help"]
