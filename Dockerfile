# Dispatch as a container: `docker build -t dispatch .`, then `docker run -p 3000:3000 dispatch`
# (embedded PostgreSQL under /data), or compose.yaml (a PostgreSQL container and DATABASE_URL).
# The base is pinned to the Node 24 release that package.json's `node` dependency resolves to.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Stage 1: the production dependencies, from the lockfile exactly. Node 24 runs the .ts sources
# as they are: there is nothing to compile, and no dev dependency reaches the final image. The
# `node` package (which gives npm scripts Node 24 on machines whose own Node is older) is removed:
# the image has Node 24 already, and one Node is enough.
# The install's `prepare` script builds the web console (console/ into console/dist) with the
# console's own dependencies, which stay in this stage: only the built files are copied on.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json openapi.yaml ./
COPY scripts/build-console.ts scripts/
COPY console console
RUN npm ci --omit=dev --no-audit --no-fund && rm -rf node_modules/node node_modules/.bin/node

# Stage 2: the sources and those dependencies, run as the unprivileged user `node`.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node . .
COPY --from=deps --chown=node:node /app/console/dist ./console/dist
# The embedded PostgreSQL (used when DATABASE_URL is unset) and the demo credentials live here.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
# Ready once migrated and connected: /readyz answers 200 (a worker serves it too).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself is PID 1 (exec form, no npm or shell in between), so SIGTERM reaches Dispatch's own
# shutdown, which stops the embedded PostgreSQL it started.
CMD ["node", "app/main.ts"]
