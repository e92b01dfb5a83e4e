# reasoning-jury as a container image: ghcr.io/reasoning-jury/reasoning-jury:<package.json version>
# (the name is package.json "config.image"; infra/k8s uses it). Build: `npm run image:build`.
#
# Two stages: `build` installs every dependency, compiles TypeScript and bundles the CLI; `runtime` holds only
# production dependencies and the files package.json "files" ships (test/package/dockerfile.test.ts
# checks both lists agree), and runs as the unprivileged `node` user (uid 1000). Both stages are on
# Node 26, the Active LTS line (package.json "engines" allows 22, 24 and 26; docs/ci.md).

FROM node:26-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: node-llama-cpp's postinstall would try to compile llama.cpp; its prebuilt
# binaries come in its npm packages and are found at run time without it.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src/ src/
COPY schemas/ schemas/
COPY connectors/ connectors/
COPY scripts/bundle.mjs scripts/
RUN npx tsc -p tsconfig.json && node scripts/bundle.mjs

FROM node:26-trixie-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/ dist/
COPY prompts/ prompts/
COPY taxonomy/ taxonomy/
COPY examples/ examples/
COPY viewer/ viewer/
COPY README.md ./
# The app stays root-owned and read-only to the process; it writes only under /data (the
# default --out folder and the reply cache are relative to the working directory).
RUN mkdir /data && chown node:node /data
WORKDIR /data
# The node image's `node` user, by number: Kubernetes' runAsNonRoot can only check a numeric user.
USER 1000:1000
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["--help"]
