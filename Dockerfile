# The durable-agent worker. Built by docker-compose.yml; runs `durable-agent worker` against TEMPORAL_ADDRESS.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` would build before the sources are copied; the build runs explicitly below.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
# The build copies serve's chat page (src/bridge/page) to dist with this script.
COPY scripts/copy-page.mjs ./scripts/
COPY src ./src
RUN npm run build && npm prune --omit=dev

# glibc (Debian), not Alpine: the Temporal core bridge ships a glibc native module.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
ENTRYPOINT ["node", "dist/cli/index.js"]
CMD ["worker"]
