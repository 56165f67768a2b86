# syntax=docker/dockerfile:1
# The Switchboard demo server, built from this repository.
#   docker build -t switchboard-server .
#   docker run --rm -p 3000:3000 switchboard-server
# The server runs as PID 1 with plain node (no package manager, no shell in between), so `docker stop`'s SIGTERM
# reaches it: running turns finish (SHUTDOWN_GRACE_MS, default 10 s), the last spans are exported, Redis is closed,
# and it exits 0. Give it that long: `docker stop -t 20` (compose: stop_grace_period).

ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm-slim AS build
ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0
# pnpm at the version package.json's packageManager names.
RUN corepack enable
WORKDIR /src
# Dependencies first, from the lockfile alone: this layer is reused until the lockfile changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile
# Every package and apps/server to JavaScript (dist/), the console to its page.
RUN pnpm build
# apps/server with its production dependencies only; the workspace packages copied in (dist/ and package.json).
RUN pnpm --filter @switchboard/server deploy --prod --offline --config.inject-workspace-packages=true /out

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
# Owned by root, run by `node`: the server cannot change its own code.
COPY --from=build /out/package.json ./package.json
COPY --from=build /out/node_modules ./node_modules
COPY --from=build /out/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# The workspace packages export their TypeScript sources by default; this condition selects their built dist/.
CMD ["node", "--conditions=switchboard-dist", "dist/main.js"]
