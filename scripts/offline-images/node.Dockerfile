# Stand-in for node:22-bookworm-slim (scripts/offline-images.sh): the same layout as the real
# image — node and npm under /usr/local, user node (uid/gid 1000) with a home — on Debian
# bookworm minbase, plus the CA bundle of the machine that built it, for networks that re-sign TLS.
ARG BASE
FROM ${BASE}
ARG NODE_VERSION
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
ENV NODE_VERSION=${NODE_VERSION} \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
LABEL org.opencontainers.image.description="offline stand-in for node:22-bookworm-slim (tablegate scripts/offline-images.sh)"
CMD ["node"]
