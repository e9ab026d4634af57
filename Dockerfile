# Dispatch as a container: `docker build -t dispatch .`, then `docker run -p 3000:3000 dispatch`
# (embedded PostgreSQL under /data), or compose.yaml (a PostgreSQL container and DATABASE_URL).

# Stage 1: the production dependencies, from the lockfile exactly. Node 24 runs the .ts sources
# as they are: there is nothing to compile, and no dev dependency reaches the final image.
FROM node:24 AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# Stage 2: the sources and those dependencies, run as the unprivileged user `node`.
FROM node:24
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node . .
# The embedded PostgreSQL (used when DATABASE_URL is unset) and the demo credentials live here.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
CMD ["npm", "start"]
