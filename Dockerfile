# tablegate image: a build stage compiles the TypeScript with the dev dependencies; the run stage
# has the production dependencies and dist/ only, runs as the unprivileged `node` user (uid 1000)
# under tini, and takes its configuration from `docker run` arguments or TABLEGATE_* variables
# (docker/entrypoint.sh). test/integration/packaging.test.ts checks this file without Docker;
# scripts/test-container.sh builds and runs it (BuildKit and the classic builder alike: no
# RUN --mount and no `# syntax` line, which would pull a frontend image from a registry).

# Node 22 LTS (the project needs Node 20 or newer). Pin a digest here for reproducible builds.
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run tsc before the sources are here; the dev dependencies'
# own install scripts (swc, testcontainers' ssh2) serve the tests, not tsc.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && chmod 0755 dist/cli.js

FROM ${NODE_IMAGE} AS run
LABEL org.opencontainers.image.title="tablegate" \
      org.opencontainers.image.description="A MySQL or MariaDB database as a REST API" \
      org.opencontainers.image.licenses="MIT"
# tini as PID 1 forwards SIGTERM/SIGINT to node and reaps zombies. `docker run --init` would do
# the same, but Kubernetes has no such switch and the node image ships no init, so it is here.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    TABLEGATE_LISTEN_PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
# No production dependency has an install script (the packaging test checks the lock file), so
# --ignore-scripts skips nothing but `prepare`, which needs the dev dependencies.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY docker/entrypoint.sh /usr/local/bin/tablegate-entrypoint
# The app stays owned by root (node cannot change it); node owns only its state directory:
# uploads (a volume) and, when no TABLEGATE_JWT_SECRET is given, the generated jwt-secret.
RUN chmod 0755 /usr/local/bin/tablegate-entrypoint \
 && ln -s /app/dist/cli.js /usr/local/bin/tablegate \
 && mkdir -p /home/node/.tablegate/uploads \
 && chown -R node:node /home/node/.tablegate \
 && chmod 0700 /home/node/.tablegate
USER node
VOLUME ["/home/node/.tablegate/uploads"]
EXPOSE 8080
# Needs nothing but node. It asks the port in TABLEGATE_LISTEN_PORT: change the port with that
# variable, not with `-o`, or this check asks the wrong one.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TABLEGATE_LISTEN_PORT||8080)+'/health',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "tablegate-entrypoint"]
CMD ["run"]
