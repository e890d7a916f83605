# One image for the API, the workers and the one-shot migration (docker-compose.yml picks the command).
# Build stage: all dependencies, to build the front end with Vite.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:frontend && npm run build:workflows -- /app/dist/workflow-bundle.js

# Runtime: production dependencies only (tsx runs the TypeScript sources), ffmpeg for clips and assembly, jemalloc
# as the processes' allocator (scripts/lib/serviceProcess.js says why).
FROM node:20-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg fonts-inter fonts-lato fonts-open-sans fonts-roboto fonts-noto-core fonts-noto-cjk fontconfig ca-certificates libjemalloc2 \
  && ln -s /usr/lib/*-linux-gnu/libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2 \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 STORAGE_DIR=/data/storage FRONTEND_DIST=/app/frontend/dist WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .
COPY --from=build /app/frontend/dist ./frontend/dist
# the worker's workflow code bundled at build time: a worker (re)start loads it instead of running webpack
COPY --from=build /app/dist/workflow-bundle.js ./dist/workflow-bundle.js
RUN mkdir -p /data/storage && chown -R node:node /data
USER node
EXPOSE 3000
# node --import tsx, not the tsx CLI: the CLI relays SIGTERM and SIGKILLs a child that does not acknowledge it within
# 30 ms, which a busy worker can miss, and then nothing drains. Node itself gets the signal this way.
CMD ["node", "--import", "tsx", "api/server.ts"]
