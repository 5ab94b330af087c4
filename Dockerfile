# One image for both processes of Slipway: the api (default) and the worker (command override).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund
COPY api ./api
COPY activities ./activities
COPY workflows ./workflows
COPY worker ./worker
COPY shared ./shared
COPY cli ./cli
COPY bin ./bin
EXPOSE 3000
CMD ["node", "--import", "tsx", "api/server.ts"]
