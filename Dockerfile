# syntax=docker/dockerfile:1
# The API and worker image: Node 20, the built server only, run as the unprivileged `node` user.
#   API:      docker run IMAGE                                   (node dist/server/main.js)
#   worker:   docker run IMAGE node dist/server/worker-main.js   (WORKER_JOBS picks the jobs)
#   migrate:  docker run IMAGE node dist/server/cli/index.js migrate
# See docs/production.md for the settings and compose.yaml for a whole deployment.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# Production dependencies only; patch-package (a dependency) applies patches/ as in development.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/server ./dist/server
COPY --from=build /app/dist/docs ./dist/docs
COPY --from=build /app/generated/openapi.json ./generated/openapi.json
# The MCP server's tools and the guides it serves as resources (docs/mcp.md).
COPY --from=build /app/generated/mcp-tools.json ./generated/mcp-tools.json
COPY --from=build /app/docs ./docs
# The embedded database's directory (a single process without DATABASE_URL), writable by the runtime user.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# /readyz of the API (PORT), or of a worker when WORKER_HEALTH_PORT is set: 200 once the database answers and
# every migration is applied, 503 while draining.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.WORKER_HEALTH_PORT || process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/server/main.js"]
