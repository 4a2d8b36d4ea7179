# One image for every process role (ROLE=all|api|projector|scheduler|prober) and the operator CLIs.
#
# Node: the current LTS line (26, "Lithium", LTS since 2026-10-28); the workflow runs the suites on
# it and on 20, 22 and 24 (package.json `engines` stays >=20.19). better-sqlite3 12.11 supports 26.
ARG NODE_VERSION=26.13.0
FROM node:${NODE_VERSION}-trixie-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary matches the platform.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# npm ci installs exactly the lockfile and fails when it disagrees with package.json. The lockfile
# lists every platform's optional packages (@parcel/watcher-*, @unrs/resolver-binding-*), and npm
# only fetches the ones for this platform (linux-x64 or linux-arm64) from the public registry. The
# development hosts' registry mirror answers 404 for other platforms' packages, which is why
# docs/development.md says `npm install` there; `npm ci --dry-run` there confirms the lockfile is
# in sync.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY projections ./projections
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:${NODE_VERSION}-trixie-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Runs as the image's unprivileged `node` user (uid 1000); only DATA_DIR is writable by it.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health/ready').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# The operator CLIs are in the image, built; they read the container's environment (stores and
# secrets), e.g.:
#   docker compose exec projector-1 node dist/src/cli/projections.js status
#   docker compose exec api-1 node dist/src/cli/admin.js list-teams
# (`npm run <cli>` needs the sources to rebuild and is for a checkout, not the image.)
# A 32 MB young generation: half the scavenges at saturation (docs/operations.md, "Node's young
# generation").
CMD ["node", "--max-semi-space-size=32", "dist/src/main.js"]
