# IX-API provisioning service: one image for the API, the Temporal worker and the migration job.
# The API is the default command; docker-compose.yml runs the worker and the migrations from the
# same image with another command.

# ---- build: install every dependency, compile TypeScript, then drop the dev dependencies ----
FROM node:20.19-bookworm-slim AS build
WORKDIR /app

# Dependencies first, so that the layer is reused while only the sources change.
COPY package.json package-lock.json ./
RUN npm ci

# `npm run build` compiles into dist/ (api/main.ts -> dist/api/main.js) and copies the OpenAPI
# document and its rendered docs beside the code; dist/ is then all the processes read.
COPY . .
RUN npm run build \
 && npm prune --omit=dev

# ---- runtime: compiled code and production dependencies only ----
FROM node:20.19-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app

# Owned by root and read-only for the service user: the processes never write to /app.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

# The official image ships the unprivileged "node" user (uid 1000).
USER node

EXPOSE 8000

# 200 (status pass or warn) is healthy; 503 (database down), a timeout or a refused connection is not.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/api/v2/health', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["node", "dist/api/main.js"]
